// Figures of the validator's chain work, on the local subtensor (the real @polkadot/api client
// over a real websocket, finney's metadata):
// - chain-metagraph: the metagraph of 4,096 uids read by `readMetagraph` (pinned finalized block,
//   paged Keys, decoded to SS58, a hotkey -> uid map) against the same raw paged storage reads
//   (state_getKeysPaged + state_queryStorageAt, undecoded) in the same run. ratio = raw / ours.
// - chain-weights-latency: one snapshot to weights confirmed (read the subnet, map, check, sign,
//   record, send, wait for the block's events and finality) against a bare signAndSend of the
//   same set_weights waited to its finalized block, interleaved. ratio = bare / ours.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createChainClient,
  createWeightsSubmitter,
  readMetagraph,
  validatorKeypair,
  validatorMigrations,
} from "@platform/chain";
import { startLocalSubtensor } from "@platform/chain/local";
import {
  createLogger,
  initCrypto,
  keypairFromMnemonic,
  migrate,
  openDatabase,
  type WeightsSnapshot,
} from "@platform/core";
import { blake2AsHex, encodeAddress } from "@polkadot/util-crypto";
import { type Figure, median, round } from "../_figure.js";

const NETUID = 1;
const UIDS = 4096;
const ROUNDS = 7;
const BLOCK_MS = 250;
const quiet = createLogger({ name: "bench-chain", level: "silent" });
// The substrate development phrase: public test material.
const VALIDATOR = "bottom drive obey lake curtain smoke basket hold race lonely fit walk";

/** A distinct account per uid, derived, not random, so runs compare. */
function account(index: number): string {
  return encodeAddress(blake2AsHex(`bench-neuron-${index}`, 256), 42);
}

export const chainMetagraphFigure: Figure = {
  name: "chain-metagraph",
  async run() {
    const chain = await startLocalSubtensor({ blockMs: BLOCK_MS, log: quiet });
    const client = createChainClient({ endpoints: [chain.url], blockTimeMs: BLOCK_MS, log: quiet });
    try {
      // All at once: dev operations queue into the next block, so 4,096 land in one.
      await Promise.all(
        Array.from({ length: UIDS }, (_, uid) => chain.registerNeuron(NETUID, account(uid), false)),
      );
      for (let i = 0; i < 4; i++) await chain.nextBlock();
      const warm = await readMetagraph(client, NETUID);
      if (warm.uids.size !== UIDS) throw new Error(`read ${warm.uids.size} uids, not ${UIDS}`);
      const ours: number[] = [];
      const raw: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        let start = performance.now();
        const read = await readMetagraph(client, NETUID);
        ours.push(performance.now() - start);
        if (read.uids.size !== UIDS) throw new Error("a read lost uids");
        start = performance.now();
        const pairs = await client.call("raw paged Keys", async (api, connection) => {
          const hash = (await api.rpc.chain.getFinalizedHead()).toHex();
          const prefix = api.query.subtensorModule!.keys!.keyPrefix(NETUID);
          let count = 0;
          let from: string | null = null;
          for (;;) {
            const page = (await connection.provider.send("state_getKeysPaged", [
              prefix,
              1000,
              from,
              hash,
            ])) as string[];
            if (page.length === 0) break;
            const sets = (await connection.provider.send("state_queryStorageAt", [page, hash])) as {
              changes: unknown[];
            }[];
            for (const set of sets) count += set.changes.length;
            if (page.length < 1000) break;
            from = page[page.length - 1]!;
          }
          return count;
        });
        raw.push(performance.now() - start);
        if (pairs !== UIDS) throw new Error(`the raw read saw ${pairs} entries`);
      }
      const oursMs = median(ours);
      const rawMs = median(raw);
      return {
        baseline: "the same paged state_getKeysPaged + state_queryStorageAt reads, undecoded",
        ratio: round(rawMs / oursMs, 2),
        uids: UIDS,
        read_metagraph_ms: round(oursMs),
        raw_paged_ms: round(rawMs),
      };
    } finally {
      await client.close();
      await chain.close();
    }
  },
};

export const chainWeightsLatencyFigure: Figure = {
  name: "chain-weights-latency",
  async run() {
    await initCrypto();
    const chain = await startLocalSubtensor({
      blockMs: BLOCK_MS,
      log: quiet,
      subnetDefaults: {
        CommitRevealWeightsEnabled: false,
        WeightsSetRateLimit: 0,
        MinAllowedWeights: 1,
      },
    });
    const client = createChainClient({ endpoints: [chain.url], blockTimeMs: BLOCK_MS, log: quiet });
    const database = await openDatabase({ dataDir: mkdtempSync(join(tmpdir(), "bench-chain-")) });
    try {
      await migrate(database.sql, {
        namespace: "validator",
        migrations: await validatorMigrations(),
      });
      const validator = keypairFromMnemonic(VALIDATOR);
      await chain.registerNeuron(NETUID, validator.address, true);
      const miners = [1, 2, 3].map((i) => account(i));
      for (const miner of miners) await chain.registerNeuron(NETUID, miner, false);
      for (let i = 0; i < 4; i++) await chain.nextBlock();
      const keypair = await validatorKeypair({ mnemonic: VALIDATOR });
      const submitter = createWeightsSubmitter({
        client,
        sql: database.sql,
        netuid: NETUID,
        keypair,
        log: quiet,
      });
      await submitter.start();
      const snapshot = (id: number): WeightsSnapshot => ({
        id,
        computed_at: new Date().toISOString(),
        uids: [],
        weights: [],
        weights_u16: [],
        hotkeys: Object.fromEntries(miners.map((miner, i) => [miner, (i + 1) / 6])),
        burned: false,
        sources: [],
      });
      const ours: number[] = [];
      const bare: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        let start = performance.now();
        const result = await submitter.submit(snapshot(i + 1));
        ours.push(performance.now() - start);
        if (result.status !== "finalized")
          throw new Error(`submission ${i} ended ${result.status}`);
        start = performance.now();
        await client.call(
          "bare set_weights",
          (api) =>
            new Promise<void>((resolve, reject) => {
              const tx = api.tx.subtensorModule!.setWeights!(
                NETUID,
                [1, 2, 3],
                [21_845, 43_690, 65_535],
                0,
              );
              tx.signAndSend(
                keypair,
                (status: {
                  status: { isFinalized: boolean; isInvalid: boolean; isDropped: boolean };
                }) => {
                  if (status.status.isFinalized) resolve();
                  else if (status.status.isInvalid || status.status.isDropped)
                    reject(new Error("dropped"));
                },
              ).catch(reject);
            }),
          { retries: 0, timeoutMs: 60_000 },
        );
        bare.push(performance.now() - start);
      }
      const oursMs = median(ours);
      const bareMs = median(bare);
      return {
        baseline: "a bare signAndSend of the same set_weights, waited to finality",
        ratio: round(bareMs / oursMs, 2),
        block_ms: BLOCK_MS,
        snapshot_to_confirmed_ms: round(oursMs),
        bare_to_finalized_ms: round(bareMs),
        blocks_per_confirmation: round(oursMs / BLOCK_MS, 1),
      };
    } finally {
      await client.close();
      await chain.close();
      await database.close();
    }
  },
};
