import { Type } from "@sinclair/typebox";
import type { MasterContext } from "../master-context.js";
import { WeightsSnapshotStore } from "../weights/weights-snapshot-store.js";
import { type ChainClient, createChainClient } from "./chain-client.js";
import { type ChainMetagraph, chainMetagraph } from "./chain-metagraph.js";
import { SubmissionStore } from "./submission-store.js";
import { readValidatorHotkey } from "./validator-hotkey.js";
import { runValidator } from "./validator-loop.js";
import { validatorKeypair } from "./weights-submitter.js";

/** What the chain group gives the others: the metagraph the weights collector reads. */
export interface MasterChain {
  client: ChainClient;
  /** Set with PLATFORM_METAGRAPH=chain. */
  metagraph: ChainMetagraph | undefined;
}

const Block = Type.Object({ number: Type.Integer(), hash: Type.String() });
const ChainWeightsResponse = Type.Object(
  {
    netuid: Type.Integer(),
    /** The master's own validator hotkey, null when it runs none (PLATFORM_VALIDATOR_HOTKEY_FILE). */
    validator: Type.Union([Type.String(), Type.Null()]),
    last_confirmed: Type.Union([
      Type.Object({
        block: Block,
        extrinsic_hash: Type.String(),
        confirmed_at: Type.String({ format: "date-time" }),
        uids: Type.Array(Type.Integer()),
        weights_u16: Type.Array(Type.Integer()),
      }),
      Type.Null(),
    ]),
    last_attempt: Type.Union([
      Type.Object({
        status: Type.String(),
        error: Type.Union([Type.String(), Type.Null()]),
        at: Type.String({ format: "date-time" }),
      }),
      Type.Null(),
    ]),
    metagraph: Type.Union([
      Type.Object({ block: Block, hotkeys: Type.Integer(), read_at: Type.String() }),
      Type.Null(),
    ]),
    /** With `?hotkey=`: its uid in the last metagraph read (null when not registered). */
    uid: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  },
  { $id: "ChainWeightsResponse" },
);

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
      this.set(last?.finalizedBlock?.number ?? 0);
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
    help: "The master's validator's weight submissions by outcome (finalized, failed, dropped)",
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
      return {
        netuid: settings.netuid,
        validator: validatorHotkey,
        last_confirmed: confirmed?.finalizedBlock
          ? {
              block: confirmed.finalizedBlock,
              extrinsic_hash: confirmed.extrinsicHash,
              confirmed_at: confirmed.updatedAt.toISOString(),
              uids: confirmed.uids,
              weights_u16: confirmed.weights,
            }
          : null,
        last_attempt: attempt
          ? {
              status: attempt.status,
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
      snapshotSource: async () => {
        const latest = await snapshots.latest();
        if (!latest) throw new Error("no weights snapshot yet");
        return latest;
      },
      signal: stop.signal,
      log,
      onEvent: (event) => {
        if (event.type === "settled") outcomes.inc({ outcome: event.record.status });
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
  return { client, metagraph };
}
