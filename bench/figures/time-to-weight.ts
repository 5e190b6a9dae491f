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
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
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
import { connect } from "../../examples/agent-eval-challenge/src/miner/challenge-client.js";
import {
  evaluate,
  launch,
  type Miner,
  review,
  setEnv,
  submitAgent,
} from "../../examples/agent-eval-challenge/src/miner/miner-flow.js";
import { AGENT_IMAGE } from "../../examples/agent-eval-challenge/src/miner/workers.js";
import { challenge as scoringChallenge } from "../../examples/scoring-challenge/src/challenge.js";
import { DEFAULT_EVAL_IMAGE } from "../../examples/scoring-challenge/src/harness-task.js";
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

/** p-th percentile (nearest rank) of a non-empty list. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A master in this process, collecting weights every COLLECT_SECONDS. */
async function benchMaster() {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-ttw-master-"));
  const config = loadMasterConfig(
    { dataDir, port: 0 },
    {
      ADMIN_TOKEN,
      PLATFORM_WEIGHTS_INTERVAL_SECONDS: String(COLLECT_SECONDS),
      PLATFORM_IMAGE_ALLOWLIST: "ghcr.io/",
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
    async close() {
      await master.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** One measurement: ms from the upload to the challenge's result, and to the weight. */
interface Sample {
  resultMs: number;
  weightMs: number;
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
  const [done, weighted] = await Promise.all([completed, master.weightOf(miner.address, deadline)]);
  return { resultMs: done - start, weightMs: weighted - start };
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
  const start = performance.now();
  // Watched from the upload on: a collection may land before the miner's tool reads its result.
  const weighted = master.weightOf(pair.address, deadline);
  weighted.catch(() => {}); // awaited below; a failing flow must not leave it unhandled
  const id = await submitAgent(miner, agent, `ttw-${index}`);
  await setEnv(miner, id, {});
  await launch(miner, id);
  const verdict = await review(miner, id);
  if (verdict !== "allowed") throw new Error(`the review did not allow agent ${index}: ${verdict}`);
  const result = await evaluate(miner, id, { agentImage: AGENT_IMAGE });
  const accepted = performance.now();
  if (result.state !== "accepted" || !(result.score !== null && result.score > 0)) {
    throw new Error(`eval of agent ${index} ended ${result.state} with score ${result.score}`);
  }
  return { resultMs: accepted - start, weightMs: (await weighted) - start };
}
