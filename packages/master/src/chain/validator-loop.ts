import { createLogger, type Logger, type Sql, type WeightsSnapshot } from "@platform/core";
import type { IKeyringPair } from "@polkadot/types/types";
import { type ChainClient, ChainError } from "./chain-client.js";
import type { SubmissionRecord } from "./submission-store.js";
import { CommitRevealEnabledError, LocalCheckError } from "./subnet-rules.js";
import {
  createWeightsSubmitter,
  type PreparedWeights,
  type SubmitterEvent,
} from "./weights-submitter.js";

/** Exit codes of `platform validator run --once`. */
export const VALIDATOR_EXIT = { ok: 0, failed: 1, refused: 3 } as const;

/** Options of {@link runValidator}. */
export interface ValidatorOptions {
  client: ChainClient;
  /** The validator's database (the master's, or its own with `validatorMigrations()` applied). */
  sql: Sql;
  netuid: number;
  /** The hotkey's sr25519 pair (see `validatorKeypair` for wallet files, mnemonics and seeds). */
  keypair: IKeyringPair;
  /** The latest weights snapshot (`GET {master}/v1/weights/latest`, or the master's own store). */
  snapshotSource: () => Promise<WeightsSnapshot>;
  /** Return after one confirmed submission (0), a local refusal (3) or another failure (1). */
  once?: boolean;
  /** Everything but the send: read, map, check and log what would be sent. */
  dryRun?: boolean;
  /** Send a vector whose only weight is the burn uid. */
  allowBurn?: boolean;
  /** `version_key` to send; default the subnet's WeightsVersionKey. */
  versionKey?: bigint | number;
  /** Blocks a signed extrinsic stays valid; default 64. */
  eraPeriod?: number;
  /** Pause after a failure before trying again (not with `once`); default 5 block times. */
  retryMs?: number;
  /** Bound on one `snapshotSource()` call; default 30 s. */
  snapshotTimeoutMs?: number;
  signal: AbortSignal;
  log?: Logger;
  /** Progress of each submission (dashboards, tests). */
  onEvent?: (event: SubmitterEvent) => void;
}

/** How `runValidator` ended; `exitCode` is what the CLI exits with. */
export type ValidatorOutcome =
  | { exitCode: 0; reason: "confirmed"; submission: SubmissionRecord }
  | { exitCode: 0; reason: "dry_run"; prepared: PreparedWeights }
  /** `signal` aborted (without `once`: the normal way to stop). */
  | { exitCode: 0 | 1; reason: "stopped" }
  | {
      exitCode: 3;
      reason: "refused";
      /** The check that stopped it: a chain error name, `EmptyVector` or `AllBurn`. */
      check: string;
      /** For `SettingWeightsTooFast`: the first block that may include the extrinsic. */
      allowedFrom?: number;
      message: string;
    }
  | { exitCode: 1; reason: "failed"; message: string; submission?: SubmissionRecord };

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

async function boundedSnapshot(
  source: () => Promise<WeightsSnapshot>,
  ms: number,
  signal: AbortSignal,
): Promise<WeightsSnapshot> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort = () => {};
  const pending = source();
  pending.catch(() => {});
  try {
    return await Promise.race([
      pending,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`the weights snapshot did not arrive within ${ms} ms`)),
          ms,
        );
        onAbort = () => reject(new ChainError("aborted", "aborted"));
        if (signal.aborted) onAbort();
        signal.addEventListener("abort", onAbort, { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", onAbort);
  }
}

/**
 * The validator: read the latest snapshot, submit it (map to uids at a pinned block, check
 * locally, send, confirm from the block's events), wait for the next block the rate limit
 * allows, repeat. Open attempts from an earlier run are reconciled with the chain first.
 * Commit-reveal on the subnet stops it (exit 3) before anything is sent. Without `once` it only
 * returns when `signal` aborts or commit-reveal is switched on; failures are logged and retried.
 * @example
 * const outcome = await runValidator({ client, sql, netuid: 7, keypair, snapshotSource, once: true, signal });
 * process.exitCode = outcome.exitCode;
 */
export async function runValidator(options: ValidatorOptions): Promise<ValidatorOutcome> {
  const { client, signal, once = false, dryRun = false } = options;
  const log = options.log ?? createLogger({ name: "validator" });
  const retryMs = options.retryMs ?? 5 * client.blockTimeMs;
  const submitter = createWeightsSubmitter({
    client,
    sql: options.sql,
    netuid: options.netuid,
    keypair: options.keypair,
    allowBurn: options.allowBurn,
    versionKey: options.versionKey,
    eraPeriod: options.eraPeriod,
    log,
    onEvent: options.onEvent,
  });
  const stopped = (): ValidatorOutcome => ({ exitCode: once ? 1 : 0, reason: "stopped" });
  const refused = (error: LocalCheckError): ValidatorOutcome => ({
    exitCode: 3,
    reason: "refused",
    check: error.check,
    ...(error.allowedFrom !== undefined ? { allowedFrom: error.allowedFrom } : {}),
    message: error.message,
  });
  const aborted = (error: unknown) =>
    signal.aborted || (error instanceof ChainError && error.kind === "aborted");

  log.info("validator starting", {
    netuid: options.netuid,
    hotkey: submitter.hotkey,
    once,
    dryRun,
  });

  // Open attempts first: a restart must neither lose nor repeat one.
  for (;;) {
    if (signal.aborted) return stopped();
    try {
      await submitter.start({ signal });
      break;
    } catch (error) {
      if (aborted(error)) return stopped();
      if (error instanceof CommitRevealEnabledError) {
        log.error("validator refuses to start", { error: error.message });
        return refused(error);
      }
      log.error("validator could not start", { error: errorText(error) });
      if (once) return { exitCode: 1, reason: "failed", message: errorText(error) };
      await sleep(retryMs, signal);
    }
  }

  for (;;) {
    if (signal.aborted) return stopped();
    try {
      const snapshot = await boundedSnapshot(
        options.snapshotSource,
        options.snapshotTimeoutMs ?? 30_000,
        signal,
      );
      const result = await submitter.submit(snapshot, { dryRun, signal });
      if (result.status === "dry_run") {
        if (once) return { exitCode: 0, reason: "dry_run", prepared: result.prepared };
        await sleep(Math.max(retryMs, client.blockTimeMs), signal);
        continue;
      }
      const record = result.record;
      if (result.status === "finalized") {
        if (once) return { exitCode: 0, reason: "confirmed", submission: record };
        const limit = Number(result.prepared.rules.weightsSetRateLimit);
        const confirmedAt = record.finalizedBlock?.number ?? record.builtBlock.number;
        // The next set is allowed from confirmedAt + limit; it is sent one block before, so it
        // is included right then. Always at least one block later.
        const next = Math.max(confirmedAt + limit - 1, confirmedAt + 1);
        log.info("waiting for the next allowed block", { block: next + 1 });
        await client.waitForHead(next, { signal }).catch((error) => {
          if (!aborted(error)) log.warn("waiting for a block failed", { error: errorText(error) });
        });
        continue;
      }
      const message = `set_weights ${result.status}: ${record.errorName ?? "unknown"}${
        record.errorMessage ? ` (${record.errorMessage})` : ""
      }`;
      if (once) return { exitCode: 1, reason: "failed", message, submission: record };
      log.warn("set_weights did not succeed; trying again", { message });
      await sleep(retryMs, signal);
    } catch (error) {
      if (aborted(error)) return stopped();
      if (error instanceof CommitRevealEnabledError) {
        log.error("commit-reveal was switched on; the validator stops", { error: error.message });
        return refused(error);
      }
      if (error instanceof LocalCheckError) {
        if (once) return refused(error);
        if (error.check === "SettingWeightsTooFast" && error.allowedFrom !== undefined) {
          log.info("rate limited; waiting for the allowed block", {
            allowedFrom: error.allowedFrom,
          });
          await client.waitForHead(error.allowedFrom - 1, { signal }).catch((e) => {
            if (!aborted(e)) log.warn("waiting for a block failed", { error: errorText(e) });
          });
          continue;
        }
        log.warn("a local check refused the weights; trying again later", {
          check: error.check,
          error: error.message,
        });
        await sleep(retryMs, signal);
        continue;
      }
      log.error("validator round failed", { error: errorText(error) });
      if (once) return { exitCode: 1, reason: "failed", message: errorText(error) };
      await sleep(retryMs, signal);
    }
  }
}
