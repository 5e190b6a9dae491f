/**
 * The scoring challenge's own environment (the SDK reads PORT, DATABASE_URL, CHALLENGE_TOKEN,
 * PLATFORM_MASTER_URL, BROKER_TOKEN...). `Settings` is what TypeBox checks one variable at a
 * time; `resolveSettings` adds the rules that span several (EXECUTOR=broker needs the master's
 * URL and token, an LLM base URL needs a model) and turns the lot into the options the pipeline
 * runs with.
 *
 * Budgets count tokens, not seconds (one token = one byte). The defaults suit a CPU: 128 KiB
 * (131072 tokens) is 128 batches of 8 rows of 128 bytes, about half a minute for the example
 * bundle on two cores, enough for the scores of honest bundles to separate (good.zip: about
 * 4 bits per byte against the uniform 8). A GPU deployment raises TOKEN_BUDGET.
 */
import {
  type ChallengeSettings,
  ConfigError,
  type ConfigOf,
  type Static,
  Type,
} from "@platform/challenge-sdk";
import { DEFAULT_EPOCH_SECONDS } from "./epochs.js";
import { DEFAULT_EVAL_IMAGE } from "./harness-task.js";
import { DEFAULT_MEMORISATION_TOLERANCE_BPB } from "./score.js";
import { DEFAULT_WINDOW_BYTES } from "./scored-bytes.js";

/** The corpus's training bytes minus a margin: the largest stream a run can be given. */
const MAX_TOKEN_BUDGET = 4 * 1024 * 1024;

/** Every variable this challenge reads beyond the SDK's own. */
export const Settings = Type.Object({
  WORKER_ENABLED: Type.Boolean({
    default: true,
    description: "Process submissions in the background; false: only process-next does",
  }),
  WORKER_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 16, default: 1 }),
  LLM_GATE: Type.Union([Type.Literal("required"), Type.Literal("off")], {
    default: "required",
    description:
      "off skips the LLM review (development only): logged at start, recorded per bundle",
  }),
  LLM_BASE_URL: Type.Optional(
    Type.String({
      pattern: "^https?://[^\\s]+$",
      description: "An OpenAI-compatible server: requests go to {LLM_BASE_URL}/chat/completions",
    }),
  ),
  LLM_API_KEY: Type.String({ default: "" }),
  LLM_MODEL: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  LLM_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, maximum: 600, default: 60 }),
  EVAL_IMAGE: Type.String({ minLength: 1, maxLength: 255, default: DEFAULT_EVAL_IMAGE }),
  EVAL_IMAGE_PULL: Type.Boolean({
    default: false,
    description: "Let the local engine pull EVAL_IMAGE (the default image is built locally)",
  }),
  EXECUTOR: Type.Optional(
    Type.Union([Type.Literal("docker"), Type.Literal("broker")], {
      description: "Default: broker when PLATFORM_MASTER_URL and BROKER_TOKEN are set, else docker",
    }),
  ),
  EPOCH_SECONDS: Type.Integer({ minimum: 1, maximum: 31_622_400, default: DEFAULT_EPOCH_SECONDS }),
  TOKEN_BUDGET: Type.Integer({ minimum: 1024, maximum: MAX_TOKEN_BUDGET, default: 131_072 }),
  STEP_BUDGET: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 4096 }),
  MEMORY_MB: Type.Integer({ minimum: 256, maximum: 3072, default: 2048 }),
  HOLDOUT_BYTES: Type.Integer({ minimum: 1024, maximum: 1_048_576, default: 65_536 }),
  // The pool the scored bytes are drawn from: a directory holding corpus.json and its text
  // (corpus/POOL.md). Production mounts a PRIVATE one here; unset: the public pool built by
  // corpus/build-pool.sh when it is there, else the small pinned corpus (development only).
  CORPUS_DIR: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
  // Bytes of each window of an epoch's stream (scored-bytes.ts).
  WINDOW_BYTES: Type.Integer({ minimum: 128, maximum: 65_536, default: DEFAULT_WINDOW_BYTES }),
  // The secret the windows are drawn from; unset: made once and stored in the database.
  SCORING_WINDOW_SECRET: Type.Optional(
    Type.String({ pattern: "^([0-9a-f]{2}){32,64}$", description: "64-128 lowercase hex digits" }),
  ),
  // How far the holdout may trail the stream (bits per byte) before the score counts the holdout.
  MEMORISATION_TOLERANCE_BPB: Type.Number({
    minimum: 0,
    maximum: 8,
    default: DEFAULT_MEMORISATION_TOLERANCE_BPB,
  }),
  RUN_TIMEOUT_SECONDS: Type.Integer({ minimum: 10, maximum: 86_400, default: 1800 }),
  GPU_COUNT: Type.Integer({
    minimum: 0,
    maximum: 64,
    default: 0,
    description: "GPUs runs may lease (0: CPU runs, which hold no lease)",
  }),
  GPU_TIER: Type.String({ pattern: "^[a-z0-9][a-z0-9_-]{0,31}$", default: "default" }),
  GPU_WAIT_SECONDS: Type.Integer({ minimum: 0, maximum: 3600, default: 60 }),
});
export type Settings = ConfigOf<typeof Settings>;

/** Where the containers run. */
export type ExecutorKind = "docker" | "broker";

/** The LLM gate as configured: off, required with a reviewer, or required with none (fail closed). */
export type LlmGateMode =
  | { mode: "off" }
  | { mode: "required"; provider: { baseUrl: string; apiKey: string; model: string } }
  | { mode: "required"; provider: null };

/** Everything the pipeline needs to know from the environment. */
export interface ScoringOptions {
  executor: ExecutorKind;
  image: string;
  pullImage: boolean;
  llm: LlmGateMode;
  llmTimeoutMs: number;
  epochSeconds: number;
  budgets: { tokenBudget: number; stepBudget: number; memoryMb: number };
  holdoutBytes: number;
  /** Where the scored bytes come from, and how (scored-bytes.ts). */
  scoredBytes: {
    corpusDir: string | null;
    windowBytes: number;
    secret: string | null;
    memorisationToleranceBpb: number;
  };
  runTimeoutSeconds: number;
  gpu: { count: number; tier: string; waitSeconds: number };
  worker: { enabled: boolean; concurrency: number };
}

/** The options `config` and the SDK's `settings` make, or a ConfigError naming every problem. */
export function resolveSettings(
  config: Static<typeof Settings>,
  settings: Pick<ChallengeSettings, "masterUrl" | "brokerToken">,
): ScoringOptions {
  const issues: { variable: string; message: string }[] = [];
  const underMaster = settings.masterUrl !== null && settings.brokerToken !== null;
  const executor: ExecutorKind = config.EXECUTOR ?? (underMaster ? "broker" : "docker");
  if (executor === "broker" && !underMaster) {
    issues.push({
      variable: "EXECUTOR",
      message: "broker needs PLATFORM_MASTER_URL and BROKER_TOKEN (set by the master)",
    });
  }
  if (config.LLM_BASE_URL !== undefined && config.LLM_MODEL === undefined) {
    issues.push({ variable: "LLM_MODEL", message: "required when LLM_BASE_URL is set" });
  }
  if (issues.length > 0) throw new ConfigError(issues, "scoring challenge configuration");

  let llm: LlmGateMode;
  if (config.LLM_GATE === "off") llm = { mode: "off" };
  else if (config.LLM_BASE_URL !== undefined && config.LLM_MODEL !== undefined) {
    llm = {
      mode: "required",
      provider: {
        baseUrl: config.LLM_BASE_URL.replace(/\/+$/, ""),
        apiKey: config.LLM_API_KEY,
        model: config.LLM_MODEL,
      },
    };
  } else llm = { mode: "required", provider: null };

  return {
    executor,
    image: config.EVAL_IMAGE,
    pullImage: config.EVAL_IMAGE_PULL,
    llm,
    llmTimeoutMs: config.LLM_TIMEOUT_SECONDS * 1000,
    epochSeconds: config.EPOCH_SECONDS,
    budgets: {
      tokenBudget: config.TOKEN_BUDGET,
      stepBudget: config.STEP_BUDGET,
      memoryMb: config.MEMORY_MB,
    },
    holdoutBytes: config.HOLDOUT_BYTES,
    scoredBytes: {
      corpusDir: config.CORPUS_DIR ?? null,
      windowBytes: config.WINDOW_BYTES,
      secret: config.SCORING_WINDOW_SECRET ?? null,
      memorisationToleranceBpb: config.MEMORISATION_TOLERANCE_BPB,
    },
    runTimeoutSeconds: config.RUN_TIMEOUT_SECONDS,
    gpu: { count: config.GPU_COUNT, tier: config.GPU_TIER, waitSeconds: config.GPU_WAIT_SECONDS },
    worker: { enabled: config.WORKER_ENABLED, concurrency: config.WORKER_CONCURRENCY },
  };
}
