// Figure: scored submissions per minute through the scoring challenge's public API, with one
// background worker (baseline) and with two (candidate). Each round starts the challenge with
// `challenge.start()` on its own embedded database in a temp dir (EXECUTOR=docker, LLM gate off,
// a small stream), submits the same N distinct bundles, each signed by a fresh miner key, and
// times from the first submit to the last scored record seen by polling
// GET /v1/submissions/{id}. Every submission of both rounds must end scored, or the figure
// throws: a refused or failed bundle would make a round faster for the wrong reason. Scored is
// `completed`, or rejected by the behavioural copy check, which judges a run only after it has
// been scored in full (these bundles all compute what good.zip computes, so every one after the
// first is such a copy: the same work, the same time).
//
// The bundles are good.zip's two files, training.py's `train` opening with a block of data-only
// assignments (local names nothing reads) that makes each bundle distinct to the near-duplicate
// check. The block must be reachable code: the check judges only code that can run (a module
// nothing imports is dropped). It normalises every string to "S" and every number to "N", so
// random string VALUES would leave every bundle's shingles identical; the block's randomness is
// in the SHAPE of its literals (nesting, kinds, keywords), which is what the shingles keep. The
// figure checks with the service's own `fingerprint` and `jaccard` that no two bundles reach
// the threshold before submitting.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { initCrypto, keypairFromSeed, signRequest } from "@platform/core";
import { type Bundle, openBundle } from "../../examples/scoring-challenge/src/bundle/index.js";
import { challenge } from "../../examples/scoring-challenge/src/challenge.js";
import { DEFAULT_EVAL_IMAGE } from "../../examples/scoring-challenge/src/harness-task.js";
import {
  fingerprint,
  jaccard,
  NEAR_DUPLICATE_THRESHOLD,
} from "../../examples/scoring-challenge/src/near-duplicate.js";
// The example's test ZIP writer: a plain, correct writer (deflate, UTF-8 names) when given
// well-formed entries, which saves the bench a second one.
import { writeZip } from "../../examples/scoring-challenge/test/zip-writer.js";
import { type Figure, round } from "../_figure.js";

const run = promisify(execFile);
const IMAGE = process.env.EVAL_IMAGE || DEFAULT_EVAL_IMAGE;
const SLUG = "scoring";
const SUBMIT_PATH = "/v1/submissions";
/** Timed submissions per round; one more per round warms the instance up before the clock. */
const SUBMISSIONS = 6;
const TOKEN_BUDGET = 16_384;
const HOLDOUT_BYTES = 4096;
/** Literal entries in each bundle's padding module: about 900 distinct shingles of its own. */
const PADDING_ENTRIES = 120;
/** Longest a round may take before the figure gives up (the runs are ~10-30 s each). */
const ROUND_TIMEOUT_MS = 15 * 60_000;
const POLL_MS = 200;

/** A small seeded PRNG (mulberry32): the same bundles on every run of the figure. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * One random Python literal. Values are random too, but only the shape counts for the
 * near-duplicate check: which containers nest where, and which kinds and keywords fill them.
 */
function randomLiteral(random: () => number, depth: number): string {
  const pick = Math.floor(random() * (depth >= 3 ? 6 : 10));
  const word = () => random().toString(36).slice(2, 8);
  const items = (n: number, item: () => string) => Array.from({ length: n }, item);
  const inner = () => randomLiteral(random, depth + 1);
  const count = () => 1 + Math.floor(random() * 3);
  switch (pick) {
    case 0:
      return String(Math.floor(random() * 1000));
    case 1:
      return `-${(random() * 100).toFixed(2)}`;
    case 2:
      return JSON.stringify(word());
    case 3:
      return ["True", "False", "None"][Math.floor(random() * 3)]!;
    case 4:
      return `b${JSON.stringify(word())}`;
    case 5:
      return `${Math.floor(random() * 100)}j`;
    case 6:
      return `(${items(count(), inner).join(", ")},)`;
    case 7:
      return `[${items(count(), inner).join(", ")}]`;
    case 8:
      return `{${items(count(), () => `${JSON.stringify(word())}: ${inner()}`).join(", ")}}`;
    default:
      return `{${items(count(), () => String(Math.floor(random() * 100)))}}`;
  }
}

/**
 * training.py with a block of data-only assignments opening `train`: reachable (so the check
 * counts it), read by nothing (so the run is good.zip's run).
 */
function paddedTraining(training: string, seed: number): string {
  const random = seededRandom(seed);
  const lines: string[] = [];
  for (let i = 0; i < PADDING_ENTRIES; i++)
    lines.push(`    _bench_pad_${i} = ${randomLiteral(random, 0)}`);
  const padded = training.replace(
    /^def train\(ctx\):\n/m,
    (head) => `${head}${lines.join("\n")}\n`,
  );
  if (padded === training) throw new Error("good.zip's training.py has no `def train(ctx):`");
  return padded;
}

async function goodBundle(): Promise<Bundle> {
  const zip = readFileSync(
    new URL("../../examples/scoring-challenge/bundles/good.zip", import.meta.url),
  );
  const opened = await openBundle(zip);
  if (!opened.ok) throw new Error(`bundles/good.zip does not open: ${opened.error.message}`);
  return opened.value;
}

/**
 * `count` ZIPs of good.zip's files, each training.py distinctly padded, opened the way the
 * service opens them and checked pairwise against the near-duplicate threshold.
 */
export async function distinctBundles(
  count: number,
): Promise<{ zips: Buffer[]; maxJaccard: number }> {
  const good = await goodBundle();
  const zips: Buffer[] = [];
  const prints: Uint32Array[] = [];
  for (let i = 0; i < count; i++) {
    const zip = writeZip(
      good.files.map((file) => ({
        name: file.path,
        data:
          file.path === "training.py"
            ? paddedTraining(Buffer.from(file.data).toString("utf8"), 0x5c0e + i)
            : file.data,
      })),
    );
    const opened = await openBundle(zip);
    if (!opened.ok) throw new Error(`bench bundle ${i} does not open: ${opened.error.message}`);
    zips.push(zip);
    prints.push(fingerprint(opened.value.files).shingles);
  }
  let maxJaccard = 0;
  for (let a = 0; a < count; a++) {
    for (let b = a + 1; b < count; b++) {
      const similarity = jaccard(prints[a]!, prints[b]!);
      if (similarity >= NEAR_DUPLICATE_THRESHOLD) {
        throw new Error(
          `bench bundles ${a} and ${b} are near-duplicates (Jaccard ${similarity.toFixed(3)})`,
        );
      }
      maxJaccard = Math.max(maxJaccard, similarity);
    }
  }
  return { zips, maxJaccard };
}

interface SubmissionRecord {
  id: string;
  status: string;
  error: string | null;
  bpb: number | null;
}

/** The miner's signed submit, each with a key of its own (seeded: no key reuse in a round). */
async function submit(url: string, zip: Buffer, minerSeed: number): Promise<string> {
  const miner = keypairFromSeed(`0x${minerSeed.toString(16).padStart(64, "0")}`);
  const body = JSON.stringify({
    filename: "bundle.zip",
    code: zip.toString("base64"),
    metadata: {},
  });
  const headers = signRequest(miner, { method: "POST", url: SUBMIT_PATH, body, slug: SLUG });
  const res = await fetch(`${url}${SUBMIT_PATH}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`submit answered ${res.status}: ${text.slice(0, 500)}`);
  return (JSON.parse(text) as SubmissionRecord).id;
}

async function readStatus(url: string, id: string): Promise<SubmissionRecord> {
  const res = await fetch(`${url}${SUBMIT_PATH}/${id}`);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`status of ${id} answered ${res.status}: ${text}`);
  return JSON.parse(text) as SubmissionRecord;
}

// A behavioural copy is rejected after its scored run: as much work as a completed one.
const SCORED_COPY = /^duplicate: this bundle computes what submission \d+ computes/;

/** What a scored record came to: its status and bpb, or the copy verdict naming the distance. */
function outcomeOf(record: SubmissionRecord): string {
  return record.status === "completed"
    ? `completed at ${record.bpb?.toFixed(6)} bpb`
    : `${record.status}: ${record.error}`;
}

/** Polls until every id is scored; throws on any other final state or on timeout. */
async function waitCompleted(url: string, ids: string[]): Promise<SubmissionRecord[]> {
  const done = new Map<string, SubmissionRecord>();
  const deadline = Date.now() + ROUND_TIMEOUT_MS;
  while (done.size < ids.length) {
    for (const id of ids) {
      if (done.has(id)) continue;
      const record = await readStatus(url, id);
      const scored =
        record.status === "completed" ||
        (record.status === "rejected" && SCORED_COPY.test(record.error ?? ""));
      if (scored) done.set(id, record);
      else if (record.status !== "pending" && record.status !== "running") {
        throw new Error(
          `submission ${id} ended ${record.status}, not scored: ${record.error ?? "(no error)"}`,
        );
      }
    }
    if (done.size === ids.length) break;
    if (Date.now() > deadline) {
      throw new Error(`${ids.length - done.size} submissions not scored in time`);
    }
    await sleep(POLL_MS);
  }
  return ids.map((id) => done.get(id)!);
}

/**
 * One round: a fresh challenge with `workers` background workers, one warm-up submission
 * scored before the clock starts (engine, page cache, the instance's database), then the timed
 * `zips`. Submissions per minute from the first submit to the last completion.
 */
async function scoreRound(
  workers: number,
  warmUp: Buffer,
  zips: Buffer[],
  minerSeedBase: number,
): Promise<{ perMinute: number; outcomes: string[] }> {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-scoring-"));
  const running = await challenge.start({
    host: "127.0.0.1",
    port: 0,
    dataDir,
    // Only what the figure chooses: DATABASE_URL or the like from the shell must not leak in.
    env: {
      CHALLENGE_TOKEN: "bench-scoring-challenge-token-0123456789",
      LOG_LEVEL: "error",
      EXECUTOR: "docker",
      EVAL_IMAGE: IMAGE,
      LLM_GATE: "off",
      WORKER_ENABLED: "true",
      WORKER_CONCURRENCY: String(workers),
      TOKEN_BUDGET: String(TOKEN_BUDGET),
      HOLDOUT_BYTES: String(HOLDOUT_BYTES),
      RUN_TIMEOUT_SECONDS: "600",
    },
  });
  try {
    await waitCompleted(running.url, [await submit(running.url, warmUp, minerSeedBase)]);
    const start = performance.now();
    const ids: string[] = [];
    for (const [i, zip] of zips.entries()) {
      ids.push(await submit(running.url, zip, minerSeedBase + 1 + i));
    }
    const records = await waitCompleted(running.url, ids);
    const minutes = (performance.now() - start) / 60_000;
    return { perMinute: zips.length / minutes, outcomes: records.map(outcomeOf) };
  } finally {
    await running.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export const scoringThroughputFigure: Figure = {
  name: "scoring-throughput",
  async run() {
    try {
      await run("docker", ["image", "inspect", IMAGE]);
    } catch {
      throw new Error(
        `${IMAGE} is missing: run bash examples/scoring-challenge/eval-image/build.sh (needs a Docker engine)`,
      );
    }
    await initCrypto();
    // The last bundle is the warm-up; the same timed bundles go to both rounds (fresh
    // databases, so none is a duplicate of the other round's), so both rounds do the same work.
    const { zips, maxJaccard } = await distinctBundles(SUBMISSIONS + 1);
    const warmUp = zips.pop()!;
    const one = await scoreRound(1, warmUp, zips, 0x1000);
    const two = await scoreRound(2, warmUp, zips, 0x2000);
    // Same bundle, same stream, forced seeds: the outcomes (a score, or the copy verdict with
    // its distance) must agree, or the rounds did not do the same computation.
    for (const [i, outcome] of one.outcomes.entries()) {
      if (outcome !== two.outcomes[i]) {
        throw new Error(
          `bundle ${i} came to ${outcome} with 1 worker and ${two.outcomes[i]} with 2`,
        );
      }
    }
    return {
      baseline: "1 worker",
      ratio: round(two.perMinute / one.perMinute, 2),
      per_minute_1: round(one.perMinute, 2),
      per_minute_2: round(two.perMinute, 2),
      submissions: SUBMISSIONS,
      token_budget: TOKEN_BUDGET,
      max_bundle_jaccard: round(maxJaccard, 3),
    };
  },
};
