// Figures: time to weight, for each reference challenge. From a miner's signed upload, sent
// through a master, to the moment that miner's hotkey holds a weight in the master's latest
// snapshot (GET /v1/weights/latest, its `hotkeys` view), one fresh miner per submission, one
// submission at a time (latency, not queueing), p50 and p90 over SUBMISSIONS of them after a
// warm-up one. The master (embedded database, collecting every COLLECT_SECONDS) and the challenge
// run in this process, the containers on the machine's Docker engine. The baseline is the
// challenge's own part, measured on the same submissions: from the upload to the challenge
// reporting its result (the scoring challenge's submission `completed`; the agent-eval
// challenge's eval run `accepted`). `ratio` = p50 of that / p50 time to weight: 1 means the
// master adds nothing; what it adds is the wait for its next collection (up to one interval:
// `PLATFORM_WEIGHTS_INTERVAL_SECONDS`, 300 s by default, so a deployment adds about half an
// interval on average to these p50s) and the collection itself.
//
// And on to the chain: the master runs its validator on a local subtensor set up as `platform dev`
// sets its own (one-second blocks, tempo 10, commit-reveal on with the chain as its own drand
// beacon, a rate limit of 10 blocks); each miner registers its hotkey first, as a real miner does,
// and `chain_*` is the time until the master reads that hotkey's uid with a weight in a revealed
// commit (`GET /v1/weights/chain`: the reveal's block, checked against the chain's `Weights`).
// BENCH_TTW_CHAIN=off leaves the chain out (the master then runs no validator).
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startLocalSubtensor } from "@platform/chain/local";
import {
  createLogger,
  generateMnemonic,
  initCrypto,
  keypairFromMnemonic,
  keypairFromSeed,
  type Sr25519Keypair,
  signRequest,
} from "@platform/core";
import { createMaster, loadMasterConfig } from "@platform/master";
import { challenge as agentEvalChallenge } from "../../examples/agent-eval-challenge/src/challenge.js";
import { DEFAULT_AGENT_IMAGE } from "../../examples/agent-eval-challenge/src/eval-worker/eval-worker-settings.js";
import { connect } from "../../examples/agent-eval-challenge/src/miner/challenge-client.js";
import {
  evaluate,
  launch,
  type Miner,
  review,
  setEnv,
  submitAgent,
} from "../../examples/agent-eval-challenge/src/miner/miner-flow.js";
import { challenge as scoringChallenge } from "../../examples/scoring-challenge/src/challenge.js";
import { DEFAULT_EVAL_IMAGE } from "../../examples/scoring-challenge/src/harness-task.js";
import {
  DEV_BLOCK_MS,
  DEV_NETUID,
  DEV_RATE_LIMIT_BLOCKS,
  DEV_TEMPO,
  devSubtensorOptions,
} from "../../packages/cli/src/commands/_dev-chain.js";
import { type Figure, median, round } from "../_figure.js";
import { distinctBundles } from "./scoring-throughput.js";

/** Timed submissions per challenge (one more warms the pipeline up first). */
const SUBMISSIONS = Number(process.env.BENCH_TTW_SUBMISSIONS ?? 10);
/** The master's collection period in the figure (a deployment's default is 300 s). */
const COLLECT_SECONDS = 2;
const POLL_MS = 100;
/** Longest one submission may take to reach a weight before the figure gives up. */
const SUBMISSION_TIMEOUT_MS = 10 * 60_000;
const ADMIN_TOKEN = "bench-ttw-admin-token-0123456789";
/** Whether the figure follows each weight on to the local chain (default on). */
const WITH_CHAIN = process.env.BENCH_TTW_CHAIN !== "off";

/** p-th percentile (nearest rank) of a non-empty list. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The local subtensor as `platform dev` runs it, its validator hotkey saved where the master's
 * in-process validator reads it, and what the master needs to use it.
 */
async function benchChain(dataDir: string) {
  const chain = await startLocalSubtensor({
    ...devSubtensorOptions(true),
    log: createLogger({ name: "bench-ttw-chain", level: "silent" }),
  });
  const mnemonic = generateMnemonic();
  const validator = keypairFromMnemonic(mnemonic);
  const hotkeyFile = join(dataDir, "validator-hotkey.json");
  writeFileSync(
    hotkeyFile,
    JSON.stringify({ name: "bench-validator", ss58Address: validator.address, mnemonic }),
    {
      mode: 0o600,
    },
  );
  await chain.registerNeuron(DEV_NETUID, validator.address, true);
  return {
    chain,
    env: {
      PLATFORM_CHAIN_ENDPOINTS: chain.url,
      PLATFORM_NETUID: String(DEV_NETUID),
      PLATFORM_METAGRAPH: "chain",
      PLATFORM_METAGRAPH_CACHE_SECONDS: "0",
      PLATFORM_VALIDATOR_HOTKEY_FILE: hotkeyFile,
      PLATFORM_CHAIN_BLOCK_MS: String(DEV_BLOCK_MS),
    },
  };
}

/** What the figure reads of `GET /v1/weights/chain?hotkey=`. */
interface ChainView {
  uid?: number | null;
  last_confirmed: { uids: number[]; weights_u16: number[]; block: { number: number } } | null;
}

/**
 * A master in this process, collecting weights every COLLECT_SECONDS; with the chain, its
 * validator sets them on a local subtensor.
 */
async function benchMaster() {
  await initCrypto();
  const dataDir = mkdtempSync(join(tmpdir(), "bench-ttw-master-"));
  const local = WITH_CHAIN ? await benchChain(dataDir) : undefined;
  const config = loadMasterConfig(
    { dataDir, port: 0 },
    {
      ADMIN_TOKEN,
      PLATFORM_WEIGHTS_INTERVAL_SECONDS: String(COLLECT_SECONDS),
      PLATFORM_IMAGE_ALLOWLIST: "ghcr.io/",
      // Its challenges are in-process upstreams, not containers the master runs.
      PLATFORM_RECONCILER: "false",
      ...local?.env,
    },
  );
  const master = await createMaster(config, {
    logger: createLogger({ name: "bench-ttw-master", level: "error" }),
  });
  const server = await master.listen({ host: "127.0.0.1", port: 0, adminHost: "127.0.0.1" });
  const admin = (path: string, method: string, body: unknown) =>
    fetch(`${server.admin.url}${path}`, {
      method,
      headers: { "content-type": "application/json", "x-admin-token": ADMIN_TOKEN },
      body: JSON.stringify(body),
    });
  return {
    url: server.url,
    /** Register `slug` (a draft until it has an address); its challenge token. */
    async register(slug: string): Promise<string> {
      const res = await admin("/v1/admin/challenges", "POST", {
        slug,
        name: slug,
        image: `ghcr.io/bench/${slug}:1`,
        version: "1",
        status: "draft",
        // The whole emission: its miners' weights are the snapshot's (0 would weigh nobody).
        emission_percent: 100,
      });
      if (res.status !== 201)
        throw new Error(`registering ${slug}: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { challenge_token: string }).challenge_token;
    },
    async activate(slug: string, url: string): Promise<void> {
      const res = await admin(`/v1/admin/challenges/${slug}`, "PATCH", {
        status: "active",
        internal_base_url: url,
      });
      if (res.status !== 200)
        throw new Error(`activating ${slug}: ${res.status} ${await res.text()}`);
    },
    /** Resolves once the latest snapshot gives `hotkey` a weight. */
    async weightOf(hotkey: string, deadline: number): Promise<number> {
      for (;;) {
        const res = await fetch(`${server.url}/v1/weights/latest`);
        if (res.status === 200) {
          const snapshot = (await res.json()) as { hotkeys?: Record<string, number> };
          const weight = snapshot.hotkeys?.[hotkey];
          if (typeof weight === "number" && weight > 0) return performance.now();
        } else {
          await res.arrayBuffer();
        }
        if (Date.now() > deadline) throw new Error(`no weight for ${hotkey} in time`);
        await sleep(POLL_MS);
      }
    },
    /** Give `hotkey` a uid on the local chain (a miner's `btcli subnet register`), if there is one. */
    async registerMiner(hotkey: string): Promise<void> {
      await local?.chain.registerNeuron(DEV_NETUID, hotkey, false);
    },
    /**
     * Resolves once a revealed commit on the chain gives `hotkey`'s uid a weight (immediately
     * with null when the figure runs no chain).
     */
    async chainWeightOf(hotkey: string, deadline: number): Promise<number | null> {
      if (!local) return null;
      for (;;) {
        const res = await fetch(
          `${server.url}/v1/weights/chain?hotkey=${encodeURIComponent(hotkey)}`,
        );
        if (res.status === 200) {
          const view = (await res.json()) as ChainView;
          const confirmed = view.last_confirmed;
          const at = typeof view.uid === "number" ? (confirmed?.uids.indexOf(view.uid) ?? -1) : -1;
          if (confirmed && at >= 0 && (confirmed.weights_u16[at] ?? 0) > 0) {
            return performance.now();
          }
        } else {
          await res.arrayBuffer();
        }
        if (Date.now() > deadline) throw new Error(`no weight on chain for ${hotkey} in time`);
        await sleep(POLL_MS);
      }
    },
    async close() {
      await master.close();
      await local?.chain.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * One measurement: ms from the upload to the challenge's result, to the weight in the master's
 * snapshot, and to the weight revealed on the local chain (null without one).
 */
interface Sample {
  resultMs: number;
  weightMs: number;
  chainMs: number | null;
}

function summary(samples: Sample[], baseline: string) {
  const weight = samples.map((s) => s.weightMs / 1000);
  const result = samples.map((s) => s.resultMs / 1000);
  return {
    baseline,
    ratio: round(median(result) / median(weight), 2),
    p50_s: round(percentile(weight, 50), 1),
    p90_s: round(percentile(weight, 90), 1),
    max_s: round(Math.max(...weight), 1),
    result_p50_s: round(percentile(result, 50), 1),
    result_p90_s: round(percentile(result, 90), 1),
    master_added_p50_s: round(median(samples.map((s) => (s.weightMs - s.resultMs) / 1000)), 1),
    submissions: samples.length,
    collect_interval_s: COLLECT_SECONDS,
    ...chainSummary(samples),
  };
}

/** The chain's part of the summary: absent when the figure ran without a chain. */
function chainSummary(samples: Sample[]): Record<string, string | number> {
  const onChain = samples.flatMap((s) => (s.chainMs === null ? [] : [s.chainMs / 1000]));
  if (onChain.length === 0) return {};
  return {
    chain_p50_s: round(percentile(onChain, 50), 1),
    chain_p90_s: round(percentile(onChain, 90), 1),
    chain_added_p50_s: round(median(samples.map((s) => ((s.chainMs ?? 0) - s.weightMs) / 1000)), 1),
    chain: `local subtensor, ${DEV_BLOCK_MS} ms blocks, tempo ${DEV_TEMPO}, commit-reveal v4, rate limit ${DEV_RATE_LIMIT_BLOCKS} blocks`,
  };
}

export const timeToWeightScoringFigure: Figure = {
  name: "time-to-weight-scoring",
  async run() {
    await initCrypto();
    const image = process.env.EVAL_IMAGE || DEFAULT_EVAL_IMAGE;
    const master = await benchMaster();
    const dataDir = mkdtempSync(join(tmpdir(), "bench-ttw-scoring-"));
    const token = await master.register("scoring");
    const running = await scoringChallenge.start({
      host: "127.0.0.1",
      port: 0,
      dataDir,
      env: {
        CHALLENGE_TOKEN: token,
        LOG_LEVEL: "error",
        EXECUTOR: "docker",
        EVAL_IMAGE: image,
        LLM_GATE: "off",
        WORKER_ENABLED: "true",
        WORKER_CONCURRENCY: "1",
        TOKEN_BUDGET: "16384",
        HOLDOUT_BYTES: "4096",
        RUN_TIMEOUT_SECONDS: "600",
        // One epoch for the whole run: a boundary mid-run would reset the weights.
        EPOCH_SECONDS: "31622400",
      },
    });
    try {
      await master.activate("scoring", running.url);
      const { zips } = await distinctBundles(SUBMISSIONS + 1);
      const samples: Sample[] = [];
      for (const [i, zip] of zips.entries()) {
        const miner = keypairFromSeed(`0x${(0x7e57_0000 + i).toString(16).padStart(64, "0")}`);
        const sample = await scoringSubmission(master, miner, zip);
        if (i > 0) samples.push(sample); // the first warmed the pipeline up
      }
      return summary(
        samples,
        "upload to the scoring challenge's own `completed` (same submissions, same run)",
      );
    } finally {
      await running.close();
      await master.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
};

async function scoringSubmission(
  master: Awaited<ReturnType<typeof benchMaster>>,
  miner: Sr25519Keypair,
  zip: Buffer,
): Promise<Sample> {
  const path = "/v1/challenges/scoring/submissions";
  const body = JSON.stringify({
    filename: "bundle.zip",
    code: zip.toString("base64"),
    metadata: {},
  });
  await master.registerMiner(miner.address);
  const headers = signRequest(miner, { method: "POST", url: path, body, slug: "scoring" });
  const deadline = Date.now() + SUBMISSION_TIMEOUT_MS;
  const start = performance.now();
  const res = await fetch(`${master.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`upload answered ${res.status}: ${text.slice(0, 300)}`);
  const { id } = JSON.parse(text) as { id: string };
  const completed = (async () => {
    for (;;) {
      const status = await fetch(`${master.url}/v1/challenges/scoring/submissions/${id}`);
      const record = (await status.json()) as { status?: string; error?: string | null };
      if (record.status === "completed") return performance.now();
      if (record.status !== "pending" && record.status !== "running") {
        throw new Error(`submission ${id} ended ${record.status}: ${record.error ?? "no error"}`);
      }
      if (Date.now() > deadline) throw new Error(`submission ${id} not scored in time`);
      await sleep(POLL_MS);
    }
  })();
  const [done, weighted, onChain] = await Promise.all([
    completed,
    master.weightOf(miner.address, deadline),
    master.chainWeightOf(miner.address, deadline),
  ]);
  return {
    resultMs: done - start,
    weightMs: weighted - start,
    chainMs: onChain === null ? null : onChain - start,
  };
}

const GOOD_AGENT = fileURLToPath(
  new URL("../../examples/agent-eval-challenge/agents/good", import.meta.url),
);

export const timeToWeightAgentEvalFigure: Figure = {
  name: "time-to-weight-agent-eval",
  async run() {
    await initCrypto();
    const master = await benchMaster();
    const dataDir = mkdtempSync(join(tmpdir(), "bench-ttw-agent-eval-"));
    const token = await master.register("agent-eval");
    // The miner flow's step lines go to stderr: stdout carries the figure's one JSON line.
    const log = console.log;
    console.log = (...args: unknown[]) => console.error(...args);
    const running = await agentEvalChallenge.start({
      host: "127.0.0.1",
      port: 0,
      dataDir,
      env: {
        CHALLENGE_TOKEN: token,
        LOG_LEVEL: "error",
        SECRET_KEY_GENERATE: "true",
        ATTESTATION_VERIFIER: "dev",
        // Every hotkey with a result holds a weight (winner-take-all would give it to one).
        WEIGHTS_MODE: "best_per_hotkey",
      },
    });
    try {
      await master.activate("agent-eval", running.url);
      const samples: Sample[] = [];
      for (let i = 0; i <= SUBMISSIONS; i++) {
        const pair = keypairFromMnemonic(generateMnemonic());
        // The challenge refuses an artifact it already holds: one more file makes each distinct.
        const agent = join(dataDir, `agent-${i}`);
        cpSync(GOOD_AGENT, agent, { recursive: true });
        writeFileSync(join(agent, "NOTES.txt"), `time-to-weight copy ${i} ${Date.now()}\n`);
        const sample = await agentEvalSubmission(master, pair, agent, i);
        if (i > 0) samples.push(sample);
      }
      return summary(
        samples,
        "upload to the agent-eval challenge's own accepted eval run (same submissions, same run)",
      );
    } finally {
      console.log = log;
      await running.close();
      await master.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
};

async function agentEvalSubmission(
  master: Awaited<ReturnType<typeof benchMaster>>,
  pair: Sr25519Keypair,
  agent: string,
  index: number,
): Promise<Sample> {
  const deadline = Date.now() + SUBMISSION_TIMEOUT_MS;
  // Through the master, as a miner reaches the challenge: the signed requests go through its proxy.
  const miner: Miner = { client: await connect(`${master.url}/challenges/agent-eval`, pair), pair };
  await master.registerMiner(pair.address);
  const start = performance.now();
  // Watched from the upload on: a collection may land before the miner's tool reads its result.
  const weighted = master.weightOf(pair.address, deadline);
  const onChain = master.chainWeightOf(pair.address, deadline);
  // Awaited below; a failing flow must not leave them unhandled.
  weighted.catch(() => {});
  onChain.catch(() => {});
  const id = await submitAgent(miner, agent, `ttw-${index}`);
  await setEnv(miner, id, {});
  await launch(miner, id);
  const verdict = await review(miner, id);
  if (verdict !== "allowed") throw new Error(`the review did not allow agent ${index}: ${verdict}`);
  const result = await evaluate(miner, id, { agentImage: DEFAULT_AGENT_IMAGE });
  const accepted = performance.now();
  if (result.state !== "accepted" || !(result.score !== null && result.score > 0)) {
    throw new Error(`eval of agent ${index} ended ${result.state} with score ${result.score}`);
  }
  const chainAt = await onChain;
  return {
    resultMs: accepted - start,
    weightMs: (await weighted) - start,
    chainMs: chainAt === null ? null : chainAt - start,
  };
}
