import { createLogger, type Logger, type Sql, type WeightsSnapshot } from "@platform/core";
import type { IKeyringPair } from "@polkadot/types/types";
import { type ChainClient, ChainError } from "./chain-client.js";
import { firstCommitBlockOfEpoch } from "./epoch-model.js";
import { type HealthGate, HealthGateError, type HealthVerdict } from "./health-gate.js";
import type { SubmissionRecord } from "./submission-store.js";
import { CommitRevealEnabledError, LocalCheckError } from "./subnet-rules.js";
import {
  createWeightsSubmitter,
  type PreparedWeights,
  type SubmitResult,
  type SubmitterEvent,
  type WeightsSubmitter,
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
  /**
   * Asked before every submission: closed while an active challenge with emission has failed
   * its collections beyond the grace (see `historyHealthGate`). A refusal is logged naming the
   * challenge and nothing is sent (with `once`: exit 3, check `HealthGate`). A gate that throws
   * counts as unknown: only the last verified snapshot may then be sent.
   */
  healthGate?: HealthGate;
  /** The operator's override: submit even while the health gate is closed (logged). */
  overrideHealthGate?: boolean;
  /** PLATFORM_DRAND_PUBLIC_KEY: the beacon key commits are encrypted to (see `resolveBeacon`). */
  drandPublicKey?: string | Uint8Array;
  /** The local subtensor's genesis hash, when the caller started it (`platform dev`). */
  localChainGenesis?: string;
  /** Seconds per block for the reveal round; default 12 on finney/testnet, else the chain's clock. */
  blockTimeSeconds?: number;
  /**
   * With `once` under commit-reveal: return once the commit's reveal is settled (default), or
   * as soon as the commit is confirmed (`false`, reason `committed`).
   */
  waitForReveal?: boolean;
  signal: AbortSignal;
  log?: Logger;
  /** Progress of each submission (dashboards, tests). */
  onEvent?: (event: SubmitterEvent) => void;
}

/**
 * How `runValidator` ended; `exitCode` is what the CLI exits with. Under commit-reveal,
 * `confirmed` means the commit was revealed and the chain's weights are the committed ones;
 * `committed` (only with `waitForReveal: false`) that the commit is on chain.
 */
export type ValidatorOutcome =
  | { exitCode: 0; reason: "confirmed"; submission: SubmissionRecord }
  | { exitCode: 0; reason: "committed"; submission: SubmissionRecord }
  | { exitCode: 0; reason: "dry_run"; prepared: PreparedWeights }
  /** `signal` aborted (without `once`: the normal way to stop). */
  | { exitCode: 0 | 1; reason: "stopped" }
  | {
      exitCode: 3;
      reason: "refused";
      /** The check that stopped it: a chain error name, `EmptyVector`, `AllBurn`, `HealthGate`... */
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

// Refusals that concern the snapshot's content: another snapshot may pass them.
const CONTENT_CHECKS = new Set(["EmptyVector", "AllBurn", "MaxWeightExceeded"]);

// With `once`: attempts at a commit that keeps arriving too late.
const MAX_LATE_RETRIES = 3;

/** A commit that arrived too late: after its drand round was stored, or its era's end. */
function isLateCommit(record: SubmissionRecord): boolean {
  return (
    record.errorName === "RevealRoundPassed" ||
    record.errorName === "InvalidRevealRound" ||
    // Its era ended at its epoch's block before a block took it (`chooseEra`).
    record.errorName === "EraExpired" ||
    (record.errorCode === "1010" &&
      /Custom error: 15\b/.test(`${record.errorName ?? ""} ${record.errorMessage ?? ""}`))
  );
}

/**
 * The validator: read the latest snapshot, submit it (map to uids at a pinned block, check
 * locally, send, confirm from the block's events), wait for the next block the rate limit
 * allows, repeat. Open attempts from an earlier run are reconciled with the chain first, and
 * commits awaiting their reveal are followed again.
 *
 * While `CommitRevealWeightsEnabled` is on, the weights are committed (`commit_timelocked_
 * weights`, never `set_weights`) once per epoch and each commit is followed to its reveal: a
 * commit not revealed in its reveal epoch is reported `unrevealed` with its cause, and the
 * weights go again at the next allowed block.
 *
 * What is sent is never blank: a snapshot that builds to nothing (empty, all-burn) or cannot
 * be fetched gives way to the last snapshot this validator verified, kept in its database
 * across restarts; and nothing is sent while the health gate is closed (unless overridden).
 * Without `once` it only returns when `signal` aborts; failures are logged and retried.
 * @example
 * const outcome = await runValidator({ client, sql, netuid: 7, keypair, snapshotSource, once: true, signal });
 * process.exitCode = outcome.exitCode;
 */
export async function runValidator(options: ValidatorOptions): Promise<ValidatorOutcome> {
  const { client, signal, once = false, dryRun = false } = options;
  const log = options.log ?? createLogger({ name: "validator" });
  const retryMs = options.retryMs ?? 5 * client.blockTimeMs;
  const waitForReveal = options.waitForReveal ?? true;
  const submitter = createWeightsSubmitter({
    client,
    sql: options.sql,
    netuid: options.netuid,
    keypair: options.keypair,
    allowBurn: options.allowBurn,
    versionKey: options.versionKey,
    eraPeriod: options.eraPeriod,
    ...(options.drandPublicKey !== undefined ? { drandPublicKey: options.drandPublicKey } : {}),
    ...(options.localChainGenesis !== undefined
      ? { localChainGenesis: options.localChainGenesis }
      : {}),
    ...(options.blockTimeSeconds !== undefined
      ? { blockTimeSeconds: options.blockTimeSeconds }
      : {}),
    log,
    onEvent: options.onEvent,
  });
  const { store } = submitter;
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

  // Follows awaited reveals; never fails the round (the next call tries again).
  const track = async () => {
    try {
      await submitter.trackReveals({ signal });
    } catch (error) {
      if (!aborted(error)) log.warn("following reveals failed", { error: errorText(error) });
    }
  };

  // Waits until the best head reaches `block`, following reveals at every new head.
  const waitTracking = async (block: number) => {
    for (;;) {
      if (signal.aborted) return;
      const head = client.head()?.number;
      if (head !== undefined && head >= block) return;
      await client.waitForHead((head ?? 0) + 1, { signal }).catch((error) => {
        if (!aborted(error)) log.warn("waiting for a block failed", { error: errorText(error) });
      });
      if (signal.aborted) return;
      await track();
    }
  };

  let lateRetries = 0;

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
      await track();
      const result = await submitRound(submitter, options, log, signal);
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
      if (result.status === "committed") {
        if (once) {
          if (!waitForReveal) return { exitCode: 0, reason: "committed", submission: record };
          const settled = await revealOf(record);
          if (!settled) return stopped();
          if (settled.status === "revealed") {
            return { exitCode: 0, reason: "confirmed", submission: settled };
          }
          return {
            exitCode: 1,
            reason: "failed",
            message: `commit #${settled.id} ${settled.status}: ${settled.commit?.cause ?? "unknown"}${
              settled.commit?.detail ? ` (${settled.commit.detail})` : ""
            }`,
            submission: settled,
          };
        }
        // The next commit: in the next epoch it is stored under, and past the rate limit.
        const state = result.prepared.commit?.state;
        const includedAt = record.finalizedBlock?.number ?? record.builtBlock.number;
        const epoch = record.commit?.commitEpoch ?? state?.targetEpoch ?? 0;
        const limit = Number(result.prepared.rules.weightsSetRateLimit);
        // By the runtime's epoch model, from the schedule the commit was planned on (the
        // submitter re-reads the chain before the next commit all the same).
        const nextEpoch =
          (state ? firstCommitBlockOfEpoch(state.schedule, epoch + 1) : undefined) ?? 0;
        const allowed = Math.max(nextEpoch, includedAt + limit, includedAt + 1);
        log.info("waiting for the next commit's block", { block: allowed, epoch: epoch + 1 });
        await waitTracking(allowed - 1);
        continue;
      }
      const what = record.kind === "commit" ? "commit" : "set_weights";
      const message = `${what} ${result.status}: ${record.errorName ?? "unknown"}${
        record.errorMessage ? ` (${record.errorMessage})` : ""
      }`;
      // A commit that reached the chain after its drand round was stored, or after its epoch's
      // block (its era ended there): nothing is wrong but its timing; the next one is planned
      // from the chain as it is then. Sent again at once.
      const late = record.kind === "commit" && isLateCommit(record);
      if (late && (!once || ++lateRetries < MAX_LATE_RETRIES)) {
        log.warn("the commit arrived after its drand round was stored; committing again", {
          message,
        });
        continue;
      }
      if (once) return { exitCode: 1, reason: "failed", message, submission: record };
      log.warn(`${what} did not succeed; trying again`, { message });
      await sleep(retryMs, signal);
    } catch (error) {
      if (aborted(error)) return stopped();
      if (error instanceof CommitRevealEnabledError) {
        log.error("commit-reveal was switched on; the validator stops", { error: error.message });
        return refused(error);
      }
      if (error instanceof LocalCheckError) {
        if (once) return refused(error);
        if (error.allowedFrom !== undefined) {
          log.info("not allowed yet; waiting for the allowed block", {
            check: error.check,
            allowedFrom: error.allowedFrom,
          });
          await waitTracking(error.allowedFrom - 1);
          continue;
        }
        if (!(error instanceof HealthGateError)) {
          log.warn("a local check refused the weights; trying again later", {
            check: error.check,
            error: error.message,
          });
        }
        await sleep(retryMs, signal);
        continue;
      }
      log.error("validator round failed", { error: errorText(error) });
      if (once) return { exitCode: 1, reason: "failed", message: errorText(error) };
      await sleep(retryMs, signal);
    }
  }

  // Follows one commit until its reveal is settled (or the signal aborts).
  async function revealOf(record: SubmissionRecord): Promise<SubmissionRecord | undefined> {
    for (;;) {
      if (signal.aborted) return undefined;
      await track();
      const now = await store.get(record.id);
      if (now && now.status !== "committed") return now;
      const head = client.head()?.number ?? 0;
      await client.waitForHead(head + 1, { signal }).catch((error) => {
        if (!aborted(error)) log.warn("waiting for a block failed", { error: errorText(error) });
      });
    }
  }
}

/**
 * One round's choice of snapshot and its submission:
 * 1. fetch the latest snapshot (bounded) and ask the health gate; a closed gate refuses the
 *    round (HealthGateError), unless overridden;
 * 2. a fresh snapshot that builds (non-empty, not all-burn) while the gate is open becomes the
 *    last verified one (kept in the database); one that does not, a failed fetch, or a gate
 *    that cannot answer, gives way to the last verified snapshot;
 * 3. submit it.
 */
async function submitRound(
  submitter: WeightsSubmitter,
  options: ValidatorOptions,
  log: Logger,
  signal: AbortSignal,
): Promise<SubmitResult> {
  const { store, netuid, hotkey } = submitter;
  let fresh: WeightsSnapshot | undefined;
  let freshError: unknown;
  try {
    fresh = await boundedSnapshot(
      options.snapshotSource,
      options.snapshotTimeoutMs ?? 30_000,
      signal,
    );
  } catch (error) {
    if (signal.aborted || (error instanceof ChainError && error.kind === "aborted")) throw error;
    freshError = error;
  }
  let verdict: HealthVerdict | undefined;
  if (options.healthGate) {
    try {
      verdict = await options.healthGate();
    } catch (error) {
      log.warn("the health gate could not answer; only the last verified snapshot may be sent", {
        error: errorText(error),
      });
    }
    if (verdict && !verdict.ok) {
      const fields = {
        challenge: verdict.challenge,
        failures: verdict.failures,
        graceCollections: verdict.graceCollections,
        error: verdict.error,
        failing: verdict.failing.map((f) => f.slug),
      };
      if (!options.overrideHealthGate) {
        log.error(
          `health gate closed: challenge ${verdict.challenge} failed its last ${verdict.failures} collections; not submitting weights`,
          fields,
        );
        throw new HealthGateError(netuid, verdict);
      }
      log.warn(
        `health gate closed (challenge ${verdict.challenge}), but overridden by the operator: submitting`,
        fields,
      );
    }
  }
  const trusted = !options.healthGate || verdict !== undefined;
  await submitter.reconcile({ wait: true, signal });
  const last = await store.lastVerifiedSnapshot(netuid, hotkey);
  const candidates: { snapshot: WeightsSnapshot; fresh: boolean }[] = [];
  if (fresh && (trusted || !last)) candidates.push({ snapshot: fresh, fresh: true });
  if (last && (!fresh || last.snapshot.id !== fresh.id || !trusted)) {
    candidates.push({ snapshot: last.snapshot, fresh: false });
  }
  if (candidates.length === 0) {
    throw freshError ?? new Error("no weights snapshot to submit");
  }
  for (const [i, candidate] of candidates.entries()) {
    const more = i < candidates.length - 1;
    let prepared: PreparedWeights;
    try {
      prepared = await submitter.prepare(candidate.snapshot, { signal });
    } catch (error) {
      if (more && error instanceof LocalCheckError && CONTENT_CHECKS.has(error.check)) {
        log.warn("the latest snapshot builds no usable vector; using the last verified one", {
          snapshot: candidate.snapshot.id,
          check: error.check,
          error: error.message,
        });
        continue;
      }
      throw error;
    }
    if (candidate.fresh && trusted) {
      await store.saveVerifiedSnapshot(netuid, hotkey, candidate.snapshot);
    } else if (!candidate.fresh) {
      log.warn("submitting the last verified snapshot", {
        snapshot: candidate.snapshot.id,
        verifiedAt: last?.verifiedAt.toISOString(),
        reason: fresh
          ? trusted
            ? "the latest snapshot builds no usable vector"
            : "the health gate could not answer"
          : `the snapshot source failed (${errorText(freshError)})`,
      });
    }
    return submitter.submitPrepared(prepared, { dryRun: options.dryRun ?? false, signal });
  }
  throw freshError ?? new Error("no weights snapshot to submit");
}
