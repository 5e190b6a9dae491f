import {
  type ChainClient,
  type ChainMetagraph,
  chainMetagraph,
  createChainClient,
  historyHealthGate,
  readValidatorHotkey,
  runValidator,
  type SubmissionRecord,
  SubmissionStore,
  validatorKeypair,
} from "@platform/chain";
import { Type } from "@sinclair/typebox";
import type { MasterContext } from "../master-context.js";
import { WeightsSnapshotStore } from "../weights/weights-snapshot-store.js";

/** What the chain group gives the others: the metagraph the weights collector reads. */
export interface MasterChain {
  client: ChainClient;
  /** Set with PLATFORM_METAGRAPH=chain. */
  metagraph: ChainMetagraph | undefined;
  /**
   * Where the master's validator last had its weights confirmed (null before the first;
   * undefined when it runs none): what the dashboard shows.
   */
  lastConfirmed(): Promise<{ block: number; kind: "set_weights" | "commit" } | null | undefined>;
}

const Block = Type.Object({ number: Type.Integer(), hash: Type.String() });
const ChainWeightsResponse = Type.Object(
  {
    netuid: Type.Integer(),
    /** The master's own validator hotkey, null when it runs none (PLATFORM_VALIDATOR_HOTKEY_FILE). */
    validator: Type.Union([Type.String(), Type.Null()]),
    /**
     * The newest weights confirmed on chain: a finalized set_weights, or a revealed commit
     * (commit-reveal v4), whose `block` is the block that revealed it.
     */
    last_confirmed: Type.Union([
      Type.Object({
        kind: Type.Union([Type.Literal("set_weights"), Type.Literal("commit")]),
        block: Block,
        /** For a commit: the block that included it, and the drand round it was locked to. */
        commit_block: Type.Optional(Block),
        reveal_round: Type.Optional(Type.Integer()),
        extrinsic_hash: Type.String(),
        confirmed_at: Type.String({ format: "date-time" }),
        uids: Type.Array(Type.Integer()),
        weights_u16: Type.Array(Type.Integer()),
      }),
      Type.Null(),
    ]),
    last_attempt: Type.Union([
      Type.Object({
        kind: Type.Union([Type.Literal("set_weights"), Type.Literal("commit")]),
        /** pending, in_block, finalized, failed, dropped; a commit: committed, revealed, unrevealed. */
        status: Type.String(),
        /** For an unrevealed commit: the likely cause (pulse_missing, decryption_failed...). */
        reveal_cause: Type.Optional(Type.String()),
        error: Type.Union([Type.String(), Type.Null()]),
        at: Type.String({ format: "date-time" }),
      }),
      Type.Null(),
    ]),
    metagraph: Type.Union([
      Type.Object({ block: Block, hotkeys: Type.Integer(), read_at: Type.String() }),
      Type.Null(),
    ]),
    /**
     * The health gate: `closed` while an active challenge with emission has failed more than
     * `grace` collections in a row; the validator then sends nothing (unless `overridden`).
     */
    health_gate: Type.Object({
      status: Type.Union([Type.Literal("open"), Type.Literal("closed")]),
      grace: Type.Integer(),
      overridden: Type.Boolean(),
      /** While closed: the challenge failing longest, and its failed collections in a row. */
      challenge: Type.Optional(Type.String()),
      failures: Type.Optional(Type.Integer()),
    }),
    /** With `?hotkey=`: its uid in the last metagraph read (null when not registered). */
    uid: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  },
  { $id: "ChainWeightsResponse" },
);

/**
 * The last confirmed attempt as `last_confirmed` shows it: where its weights landed is the
 * set_weights' block, or for a commit the block that revealed it.
 */
function confirmedView(record: SubmissionRecord | undefined) {
  if (!record) return null;
  const block = record.kind === "commit" ? record.commit?.revealBlock : record.finalizedBlock;
  if (!block) return null;
  return {
    kind: record.kind,
    block,
    ...(record.commit && record.finalizedBlock
      ? { commit_block: record.finalizedBlock, reveal_round: record.commit.revealRound }
      : {}),
    extrinsic_hash: record.extrinsicHash,
    confirmed_at: record.updatedAt.toISOString(),
    uids: record.uids,
    weights_u16: record.weights,
  };
}

/**
 * The master's side of the chain (docs/chain.md), when PLATFORM_CHAIN_ENDPOINTS is set: one
 * client for everything; the metagraph from `SubtensorModule.Keys` with PLATFORM_METAGRAPH=chain;
 * the subnet owner's validator in-process with PLATFORM_VALIDATOR_HOTKEY_FILE, setting the
 * latest snapshot on chain; `GET /v1/weights/chain` (public: what is on chain is public anyway);
 * the `chain` readiness check and the `platform_chain_*` metrics.
 */
export function registerChainRoutes(context: MasterContext): MasterChain | undefined {
  const settings = context.config.chain;
  if (!settings) return undefined;
  const { log } = context;
  const client = createChainClient({
    endpoints: settings.endpoints,
    callTimeoutMs: settings.callTimeoutMs,
    blockTimeMs: settings.blockTimeMs,
    log,
  });
  const metagraph = settings.metagraphFromChain
    ? chainMetagraph(client, {
        netuid: settings.netuid,
        cacheSeconds: settings.metagraphCacheSeconds,
      })
    : undefined;
  const submissions = new SubmissionStore(context.database.sql);
  const snapshots = new WeightsSnapshotStore(context.database.sql, {
    keep: context.config.weights.keepSnapshots,
  });
  let validatorHotkey: string | null = null;
  const healthGate = historyHealthGate({
    history: (limit) => snapshots.history(limit),
    graceCollections: settings.healthGateGrace,
  });

  context.health.register("chain", async () => {
    const status = client.status();
    if (!status.connected) throw new Error(`not connected (${status.lastError ?? "connecting"})`);
  });
  context.metrics.gauge({
    name: "platform_chain_weights_last_confirmed_block",
    help: "The block in which the master's validator last had its weights confirmed (0: never)",
    async collect() {
      const last = validatorHotkey
        ? await submissions.lastConfirmed(settings.netuid, validatorHotkey)
        : undefined;
      this.set(confirmedView(last)?.block.number ?? 0);
    },
  });
  if (metagraph) {
    context.metrics.gauge({
      name: "platform_chain_metagraph_age_seconds",
      help: "Seconds since the metagraph was last read from the chain",
      collect() {
        const last = metagraph.last();
        if (last) this.set((Date.now() - last.readAt) / 1000);
      },
    });
  }
  const outcomes = context.metrics.counter({
    name: "platform_chain_submissions_total",
    help: "The master's validator's weight submissions by outcome (finalized, failed, dropped; commits: committed, revealed, unrevealed)",
    labelNames: ["outcome"],
  });

  context.app.route({
    method: "GET",
    path: "/v1/weights/chain",
    summary:
      "The master's weights on chain: its validator's last confirmed submission and the metagraph it read",
    tags: ["weights"],
    query: Type.Object({ hotkey: Type.Optional(Type.String({ maxLength: 64 })) }),
    responses: { 200: { description: "The chain view", schema: ChainWeightsResponse } },
    handler: async ({ query }) => {
      const recent = validatorHotkey
        ? await submissions.recent({ netuid: settings.netuid, hotkey: validatorHotkey, limit: 1 })
        : [];
      const confirmed = validatorHotkey
        ? await submissions.lastConfirmed(settings.netuid, validatorHotkey)
        : undefined;
      const read = metagraph?.last();
      const attempt = recent[0];
      const gate = await healthGate();
      return {
        netuid: settings.netuid,
        validator: validatorHotkey,
        last_confirmed: confirmedView(confirmed),
        last_attempt: attempt
          ? {
              kind: attempt.kind,
              status: attempt.status,
              ...(attempt.commit?.cause ? { reveal_cause: attempt.commit.cause } : {}),
              error: attempt.errorName,
              at: attempt.updatedAt.toISOString(),
            }
          : null,
        metagraph: read
          ? {
              block: read.block,
              hotkeys: read.uids.size,
              read_at: new Date(read.readAt).toISOString(),
            }
          : null,
        health_gate: {
          status: gate.ok ? ("open" as const) : ("closed" as const),
          grace: settings.healthGateGrace,
          overridden: settings.overrideHealthGate,
          ...(gate.ok ? {} : { challenge: gate.challenge, failures: gate.failures }),
        },
        ...(query.hotkey === undefined ? {} : { uid: read?.uids.get(query.hotkey) ?? null }),
      };
    },
  });

  const stop = new AbortController();
  let loop: Promise<unknown> | undefined;
  context.onListen(async () => {
    if (!settings.validatorHotkeyFile) return;
    const hotkey = await readValidatorHotkey(settings.validatorHotkeyFile);
    const keypair = await validatorKeypair(hotkey.secret, { expectedAddress: hotkey.pair.address });
    validatorHotkey = hotkey.pair.address;
    log.info("chain: the master's validator starts", {
      hotkey: validatorHotkey,
      netuid: settings.netuid,
    });
    loop = runValidator({
      client,
      sql: context.database.sql,
      netuid: settings.netuid,
      keypair,
      allowBurn: settings.allowBurn,
      // Weights are held while a challenge with emission keeps failing its collections: its
      // share would otherwise move to the burn uid because of an outage (docs/chain.md).
      healthGate,
      overrideHealthGate: settings.overrideHealthGate,
      ...(settings.drandPublicKey === undefined ? {} : { drandPublicKey: settings.drandPublicKey }),
      snapshotSource: async () => {
        const latest = await snapshots.latest();
        if (!latest) throw new Error("no weights snapshot yet");
        return latest;
      },
      signal: stop.signal,
      log,
      onEvent: (event) => {
        if (event.type === "settled" || event.type === "reveal")
          outcomes.inc({ outcome: event.record.status });
      },
    }).then(
      (outcome) => log.info("chain: the master's validator stopped", { reason: outcome.reason }),
      (error: unknown) =>
        log.error("chain: the master's validator failed", { error: String(error) }),
    );
  });
  context.onClose(async () => {
    stop.abort();
    await loop;
    await client.close();
  });
  return {
    client,
    metagraph,
    async lastConfirmed() {
      if (!settings.validatorHotkeyFile) return undefined;
      if (!validatorHotkey) return null;
      const view = confirmedView(await submissions.lastConfirmed(settings.netuid, validatorHotkey));
      return view ? { block: view.block.number, kind: view.kind } : null;
    },
  };
}
