/**
 * The two container runs of a bundle, as SDK tasks: `gate.py` (static gates and contract, no
 * bundle code executed) and `run.py` (the forced-init scored run: a scorer process that holds the
 * data and the report channel, and the bundle's process beside it). Files follow the harness
 * protocol: the bundle under bundle/, the corpus slices under corpus/ SEALED with a fresh key per
 * run, run.json beside them, all read-only. The nonce (HARNESS_NONCE) and the corpus key
 * (HARNESS_CORPUS_KEY) reach the scorer alone: it makes itself unreadable before reading them and
 * starts the bundle's process with a clean environment. The container is the SDK's hardened one:
 * no network, read-only root, non-root; and without Docker's init (`init: false`): the harness
 * command is PID 1, so no process of the bundle's uid holds the secrets in its environment or
 * the container's stdout (the report channel), and the bundle cannot signal the scorer.
 */
import { createHash, randomBytes } from "node:crypto";
import { type Task, type TaskFile, taskFile } from "@platform/challenge-sdk/tasks";
import type { Bundle } from "./bundle/index.js";
import type { CorpusSlices } from "./corpus.js";
import type { RunSettings } from "./score.js";

/** The evaluation image `eval-image/build.sh` builds. */
export const DEFAULT_EVAL_IMAGE = "platform/scoring-eval:local";

/** What a scored run may use; budgets count tokens, not seconds. */
export interface RunBudgets {
  /** Bytes of the stream (byte-level: one token, one byte). */
  tokenBudget: number;
  /** Most batches the iterator yields. */
  stepBudget: number;
  /** Peak resident memory the harness allows the run, in MB. */
  memoryMb: number;
  seed?: number;
  sequenceLength?: number;
  batchSize?: number;
  device?: "auto" | "cpu" | "cuda";
}

/** run.json, as the harness reads it. */
export interface RunJson {
  seed: number;
  vocab_size: number;
  sequence_length: number;
  batch_size: number;
  token_budget: number;
  step_budget: number;
  memory_mb: number;
  stream_sha256: string;
  holdout_sha256: string;
  device: "auto" | "cpu" | "cuda";
}

/** Container resources and the watchdog of one run. */
export interface RunResources {
  cpus?: number;
  /** The container's hard memory cap (default: the run's budget plus 1 GB, at most 4096). */
  containerMemoryMb?: number;
  /** /tmp, which holds the artifacts dir: its size is the artifacts quota (default 256 MB). */
  tmpfsMb?: number;
  /** Wall-clock watchdog: the container is killed past it (default 1800 s). */
  timeoutSeconds?: number;
  gpus?: number;
}

const BYTE_VOCABULARY = 256;
/** Bytes per row the harness charges by default (a bundle may ask for shorter rows). */
export const DEFAULT_SEQUENCE_LENGTH = 128;

/** run.json for `slices` under `budgets` (the seed is forced to 1337 unless given). */
export function runJson(slices: CorpusSlices, budgets: RunBudgets): RunJson {
  return {
    seed: budgets.seed ?? 1337,
    vocab_size: BYTE_VOCABULARY,
    sequence_length: budgets.sequenceLength ?? DEFAULT_SEQUENCE_LENGTH,
    batch_size: budgets.batchSize ?? 8,
    token_budget: budgets.tokenBudget,
    step_budget: budgets.stepBudget,
    memory_mb: budgets.memoryMb,
    stream_sha256: slices.streamSha256,
    holdout_sha256: slices.holdoutSha256,
    device: budgets.device ?? "auto",
  };
}

/** What score.ts checks a run report against. */
export function runSettings(run: RunJson, streamBytes: number): RunSettings {
  return {
    vocab_size: run.vocab_size,
    sequence_length: run.sequence_length,
    batch_size: run.batch_size,
    token_budget: run.token_budget,
    step_budget: run.step_budget,
    stream_sha256: run.stream_sha256,
    stream_bytes: streamBytes,
  };
}

const SEAL_DOMAIN = Buffer.from("platform-scoring-corpus-v1\0", "latin1");

/**
 * A corpus slice XORed with SHAKE-256(domain || label || 0 || key): what the bundle's process can
 * see on disk is noise; the scorer unseals it (eval-image/harness/harness_corpus.py, the same
 * construction). Sealing twice with the same key and label gives the slice back.
 */
export function sealCorpusSlice(
  data: Uint8Array,
  key: Uint8Array,
  label: "stream" | "holdout",
): Buffer {
  const stream = createHash("shake256", { outputLength: data.length })
    .update(SEAL_DOMAIN)
    .update(Buffer.from(`${label}\0`, "latin1"))
    .update(key)
    .digest();
  for (let i = 0; i < stream.length; i++) stream[i] = (stream[i] as number) ^ (data[i] as number);
  return stream;
}

/** The bundle's files under bundle/. */
export function bundleTaskFiles(bundle: Bundle): TaskFile[] {
  return bundle.files.map((file) => taskFile(`bundle/${file.path}`, file.data));
}

/** The gate run: `python3 /opt/harness/gate.py` over the bundle; small and short. */
export function gateTask(options: {
  jobId: string;
  image?: string;
  bundle: Bundle;
  nonce: string;
}): Task {
  return {
    jobId: options.jobId,
    image: options.image ?? DEFAULT_EVAL_IMAGE,
    command: ["python3", "/opt/harness/gate.py"],
    env: { HARNESS_NONCE: options.nonce },
    init: false,
    files: bundleTaskFiles(options.bundle),
    limits: { cpus: 1, memoryMb: 512, pids: 64, tmpfsMb: 16 },
    timeoutSeconds: 120,
  };
}

/** The scored run: `python3 /opt/harness/run.py` with the bundle, the corpus slices and run.json. */
export function runTask(options: {
  jobId: string;
  image?: string;
  bundle: Bundle;
  slices: CorpusSlices;
  budgets: RunBudgets;
  nonce: string;
  resources?: RunResources;
}): { task: Task; run: RunJson; settings: RunSettings } {
  const run = runJson(options.slices, options.budgets);
  const resources = options.resources ?? {};
  const key = randomBytes(32);
  const task: Task = {
    jobId: options.jobId,
    image: options.image ?? DEFAULT_EVAL_IMAGE,
    command: ["python3", "/opt/harness/run.py"],
    env: { HARNESS_NONCE: options.nonce, HARNESS_CORPUS_KEY: key.toString("hex") },
    // The scorer is PID 1: nothing above it holds its environment or the container's stdout.
    init: false,
    files: [
      ...bundleTaskFiles(options.bundle),
      taskFile("corpus/stream.bin", sealCorpusSlice(options.slices.stream, key, "stream")),
      taskFile("corpus/holdout.bin", sealCorpusSlice(options.slices.holdout, key, "holdout")),
      taskFile("run.json", JSON.stringify(run)),
    ],
    limits: {
      cpus: resources.cpus ?? 2,
      memoryMb: resources.containerMemoryMb ?? Math.min(4096, options.budgets.memoryMb + 1024),
      pids: 512,
      tmpfsMb: resources.tmpfsMb ?? 256,
      outputBytes: 1024 * 1024,
    },
    timeoutSeconds: resources.timeoutSeconds ?? 1800,
    ...(resources.gpus ? { gpus: resources.gpus } : {}),
  };
  return { task, run, settings: runSettings(run, options.slices.stream.length) };
}
