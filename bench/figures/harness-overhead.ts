// Figure: what the container costs a scored run of the scoring challenge. The same fixed byte
// stream, scored with the same trivial model (a bigram table, plain SGD), two ways in one run:
// - candidate: the full task the challenge runs, `runTask()` of examples/scoring-challenge through
//   the SDK's `dockerTaskRunner` (hardened container, files staged, the scorer's python and torch
//   started, report parsed), one fresh container per run;
// - baseline: the harness's own `execute()` (what run.py runs: the scorer, which starts the
//   bundle's process each time) called again and again inside ONE already-running container with
//   the same image, flags and limits, after a warm-up round; its rounds interleaved with the
//   container runs.
// Both must report the same code length to the last bit, or the figure refuses to print.
import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { dockerTaskRunner } from "@platform/challenge-sdk/tasks";
import type { Bundle } from "../../examples/scoring-challenge/src/bundle/index.js";
import {
  type CorpusSlices,
  loadCorpus,
  sliceCorpus,
} from "../../examples/scoring-challenge/src/corpus.js";
import {
  newHarnessNonce,
  parseRunReport,
} from "../../examples/scoring-challenge/src/harness-report.js";
import {
  DEFAULT_EVAL_IMAGE,
  type RunBudgets,
  runJson,
  runTask,
  sealCorpusSlice,
} from "../../examples/scoring-challenge/src/harness-task.js";
import { type Figure, median, round } from "../_figure.js";

const run = promisify(execFile);
const fixture = fileURLToPath(new URL("../fixtures/harness-overhead/", import.meta.url));
const IMAGE = process.env.EVAL_IMAGE || DEFAULT_EVAL_IMAGE;
/** The service's CPU defaults: a 128 KiB stream (TOKEN_BUDGET) and a 64 KiB holdout (HOLDOUT_BYTES). */
const TOKEN_BUDGET = 131_072;
const HOLDOUT_BYTES = 65_536;
const ROUNDS = 7;
const BUDGETS: RunBudgets = { tokenBudget: TOKEN_BUDGET, stepBudget: 4096, memoryMb: 2048 };

function trivialBundle(): Bundle {
  const dir = join(fixture, "bundle");
  const files = readdirSync(dir)
    .sort()
    .map((name) => {
      const data = readFileSync(join(dir, name));
      return { path: name, data, text: data.toString("utf8") };
    });
  const unpackedBytes = files.reduce((sum, file) => sum + file.data.length, 0);
  return { codeHash: "bench", zip: Buffer.alloc(0), files, unpackedBytes };
}

/** The task's files, as the task places them (the corpus sealed with `key`), in a folder the
 * container (uid 65534) can read. */
function stageWorkspace(bundle: Bundle, slices: CorpusSlices, key: Buffer): string {
  const workspace = mkdtempSync(join(tmpdir(), "bench-harness-"));
  mkdirSync(join(workspace, "bundle"));
  mkdirSync(join(workspace, "corpus"));
  for (const file of bundle.files) writeFileSync(join(workspace, "bundle", file.path), file.data);
  writeFileSync(
    join(workspace, "corpus", "stream.bin"),
    sealCorpusSlice(slices.stream, key, "stream"),
  );
  writeFileSync(
    join(workspace, "corpus", "holdout.bin"),
    sealCorpusSlice(slices.holdout, key, "holdout"),
  );
  writeFileSync(join(workspace, "run.json"), JSON.stringify(runJson(slices, BUDGETS)));
  for (const dir of [workspace, join(workspace, "bundle"), join(workspace, "corpus")]) {
    chmodSync(dir, 0o755);
  }
  return workspace;
}

interface InProcessRound {
  seconds: number;
  nll_nats: number;
  covered_bytes: number;
}

/**
 * One container, the task's image, flags and limits, running bench/fixtures/harness-overhead/
 * inprocess.py: each `round()` asks it for one more execute() and reads its timing.
 */
function startInProcess(workspace: string, bundle: Bundle, slices: CorpusSlices, key: Buffer) {
  const { task } = runTask({
    jobId: "unused",
    image: IMAGE,
    bundle,
    slices,
    budgets: BUDGETS,
    nonce: "unused-nonce",
  });
  const limits = task.limits ?? {};
  const child = spawn(
    "docker",
    [
      "run",
      "--rm",
      "-i",
      "--network",
      "none",
      "--read-only",
      "--cap-drop",
      "ALL",
      "--security-opt",
      "no-new-privileges",
      "--user",
      "65534:65534",
      "--cpus",
      String(limits.cpus ?? 2),
      "--memory",
      `${limits.memoryMb ?? 4096}m`,
      "--pids-limit",
      String(limits.pids ?? 512),
      "--tmpfs",
      `/tmp:rw,noexec,nosuid,size=${limits.tmpfsMb ?? 256}m`,
      "-v",
      `${workspace}:/workspace:ro`,
      "-v",
      `${fixture}:/bench:ro`,
      "-e",
      `HARNESS_CORPUS_KEY=${key.toString("hex")}`,
      IMAGE,
      "python3",
      "/bench/inprocess.py",
    ],
    { stdio: ["pipe", "pipe", "pipe"] },
  );
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    async round(): Promise<InProcessRound> {
      child.stdin.write("run\n");
      for (;;) {
        const next = await lines.next();
        if (next.done) throw new Error(`the in-process baseline stopped: ${stderr}`);
        if (next.value.startsWith("{")) return JSON.parse(next.value) as InProcessRound;
      }
    },
    async close(): Promise<void> {
      child.stdin.end();
      if (child.exitCode === null) await once(child, "close");
    },
  };
}

export const harnessOverheadFigure: Figure = {
  name: "harness-overhead",
  async run() {
    try {
      await run("docker", ["image", "inspect", IMAGE]);
    } catch {
      throw new Error(
        `${IMAGE} is missing: run bash examples/scoring-challenge/eval-image/build.sh (needs a Docker engine)`,
      );
    }
    const slices = sliceCorpus(await loadCorpus(), TOKEN_BUDGET, { holdoutBytes: HOLDOUT_BYTES });
    const bundle = trivialBundle();

    // The candidate: the challenge's own task, one container per run.
    const runner = dockerTaskRunner({ pull: false });
    let job = 0;
    const containerRun = async () => {
      const nonce = newHarnessNonce();
      const { task } = runTask({
        jobId: `bench-harness-${process.pid}-${job++}`,
        image: IMAGE,
        bundle,
        slices,
        budgets: BUDGETS,
        nonce,
      });
      const start = performance.now();
      const result = await runner.run(task);
      const ms = performance.now() - start;
      const parsed = parseRunReport(result.stdout, nonce);
      if (!parsed.ok || !parsed.report.ok) {
        throw new Error(
          `the scored task failed: ${parsed.ok ? JSON.stringify(parsed.report.error) : parsed.error.message}\n${result.stderr.slice(-2000)}`,
        );
      }
      const nll = parsed.report.nll_nats;
      if (nll === null) throw new Error("the scored task reported no code length");
      return { ms, nll, covered: parsed.report.covered_bytes };
    };

    const key = randomBytes(32);
    const workspace = stageWorkspace(bundle, slices, key);
    const warm = startInProcess(workspace, bundle, slices, key);
    try {
      // Warm-up of both: the image's layers and the page cache; torch imported in the warm process.
      const first = await containerRun();
      const firstRound = await warm.round();
      const containerMs: number[] = [];
      const inProcessMs: number[] = [];
      // Interleaved, so a neighbour's burst of load hits both sides alike.
      for (let i = 0; i < ROUNDS; i++) {
        const next = await containerRun();
        const inside = await warm.round();
        for (const [nll, covered, what] of [
          [next.nll, next.covered, "a container run"],
          [inside.nll_nats, inside.covered_bytes, "an in-process round"],
        ] as const) {
          if (nll !== first.nll || covered !== first.covered) {
            throw new Error(
              `${what} measured ${nll} nats over ${covered} bytes, the first run ${first.nll} over ${first.covered}: not the same computation`,
            );
          }
        }
        containerMs.push(next.ms);
        inProcessMs.push(inside.seconds * 1000);
      }
      const c = median(containerMs);
      const p = median(inProcessMs);
      return {
        baseline:
          "the harness's execute() run again in one already-running container (same image, flags, limits)",
        ratio: round(p / c, 2),
        container_ms_per_run: round(c),
        in_process_ms_per_run: round(p),
        // The warm process's first round: the same work plus importing torch and the bundle.
        in_process_first_round_ms: round(firstRound.seconds * 1000),
        overhead_ms: round(c - p),
        stream_bytes: TOKEN_BUDGET,
        bits_per_byte: round(first.nll / (Math.LN2 * first.covered), 4),
      };
    } finally {
      await warm.close();
      await runner.close();
      rmSync(workspace, { recursive: true, force: true });
    }
  },
};
