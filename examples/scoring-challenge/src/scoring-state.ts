/**
 * What `setup` builds for one challenge instance: the settings resolved, the corpus loaded and
 * sliced (verified against its pinned sha256), the task runner, the LLM gate, the job queue and,
 * when WORKER_ENABLED, the background worker with the held-bundle expiry. Everything started
 * here is stopped through `onClose`, so two instances in one process share nothing.
 *
 * LLM_GATE=required with no reviewer configured does NOT refuse to start: production would
 * rather keep accepting bundles and fail closed than go down. Every bundle that passes the
 * static gates is then `held` (never allowed), the start log says so loudly, and once the
 * operator configures a reviewer the held bundles are released (POST
 * /internal/v1/submissions/{id}/release) or rejected after 24 h. Development says LLM_GATE=off
 * explicitly, which is logged at start and recorded on every bundle it lets through.
 */
import type { Logger, SetupContext } from "@platform/challenge-sdk";
import {
  createJobQueue,
  type JobQueue,
  runWorker,
  type WorkerEvent,
} from "@platform/challenge-sdk/jobs";
import { dockerTaskRunner, type TaskRunner, taskRunnerFor } from "@platform/challenge-sdk/tasks";
import { type Corpus, choosePool, loadCorpus, type PoolChoice } from "./corpus.js";
import { createLlmGate, type LlmGate } from "./llm-gate/index.js";
import {
  type PipelineDeps,
  SCORE_QUEUE,
  type ScoreJob,
  type ScoreResult,
} from "./pipeline/pipeline-context.js";
import { scoringHandler } from "./pipeline/process-submission.js";
import { resolveSettings, type ScoringOptions, type Settings } from "./settings.js";
import { expireHeld } from "./submission-store.js";
import { windowSecret } from "./window-secret.js";

/** `ctx.state` of every handler. */
export interface ScoringState {
  options: ScoringOptions;
  queue: JobQueue<ScoreJob, ScoreResult>;
  /** What the pipeline runs with (process-next runs it in the request). */
  pipeline: PipelineDeps;
  corpusVersion: number;
}

// Held bundles expire lazily on reads too; the timer only keeps the table honest when idle.
const HELD_EXPIRY_INTERVAL_MS = 5 * 60 * 1000;

/** Build the state of one instance (and start its worker when enabled). */
export async function createScoringState(ctx: SetupContext<Settings>): Promise<ScoringState> {
  const { sql, log, onClose } = ctx;
  const options = resolveSettings(ctx.config, ctx.settings);
  const pool = choosePool(options.scoredBytes.corpusDir);
  const corpus = await loadCorpus(pool.dir);
  warnOfPool(log, pool, corpus);
  const secret = await windowSecret(sql, options.scoredBytes.secret ?? undefined);

  const runner: TaskRunner =
    options.executor === "broker"
      ? taskRunnerFor(ctx.settings)
      : dockerTaskRunner({ pull: options.pullImage });
  onClose(() => runner.close());

  let llm: LlmGate | null = null;
  if (options.llm.mode === "off") {
    log.warn(
      "LLM_GATE=off: bundles are NOT reviewed by the LLM gate (development only); " +
        "every submission it lets through records llm_gate=off",
    );
  } else if (options.llm.provider === null) {
    log.error(
      "LLM_GATE=required but no reviewer is configured (LLM_BASE_URL, LLM_MODEL): every bundle " +
        "that passes the static gates will be HELD, never run, until one is configured " +
        "(set LLM_GATE=off explicitly for development)",
    );
  } else {
    llm = createLlmGate({
      ...options.llm.provider,
      sql,
      timeoutMs: options.llmTimeoutMs,
    });
  }

  const queue = createJobQueue<ScoreJob, ScoreResult>(sql, SCORE_QUEUE);
  const pipeline: PipelineDeps = {
    sql,
    runner,
    options,
    corpus,
    windowSecret: secret,
    llm,
    log,
  };
  log.info("scoring challenge ready", {
    executor: options.executor,
    image: options.image,
    llm_gate: options.llm.mode,
    reviewer: options.llm.mode === "required" ? (options.llm.provider?.model ?? null) : null,
    corpus_version: corpus.version,
    pool: pool.kind,
    pool_bytes: corpus.data.length,
    run_budget: `${options.budgets.tokenBudget} tokens, ${options.budgets.stepBudget} steps, ${options.budgets.memoryMb} MB`,
    gpus: options.gpu.count,
    worker: options.worker.enabled ? options.worker.concurrency : 0,
  });

  if (options.worker.enabled) startWorker(ctx, pipeline, queue);
  return { options, queue, pipeline, corpusVersion: corpus.version };
}

// What a bundle can carry at most, as English text (bundle-archive.ts): below a hundredth of the
// pool, memorising it gains less than the seed-to-seed noise of a score.
const CARRIED_TEXT_BYTES = 1_200_000;

function warnOfPool(log: Logger, pool: PoolChoice, corpus: Corpus): void {
  if (pool.kind === "private") return;
  const share = CARRIED_TEXT_BYTES / corpus.training.length;
  const advice =
    "production should mount a private corpus (CORPUS_DIR; docs/challenges/scoring.md)";
  if (pool.kind === "pinned") {
    log.warn(
      `the scored bytes are drawn from the small pinned corpus (${corpus.data.length} bytes): a ` +
        `bundle can carry up to ${Math.round(100 * Math.min(1, share))}% of it, so scores are ` +
        `for development only; build the public pool (bash examples/scoring-challenge/corpus/build-pool.sh) or ${advice}`,
    );
  } else if (share > 0.02) {
    log.warn(
      `the public pool holds ${corpus.training.length} training bytes: a bundle can carry ` +
        `${(100 * share).toFixed(1)}% of it; ${advice}`,
    );
  }
}

function startWorker(
  ctx: SetupContext<Settings>,
  pipeline: PipelineDeps,
  queue: JobQueue<ScoreJob, ScoreResult>,
): void {
  const { sql, log, onClose } = ctx;
  // Containers a killed process left behind (the broker reaps its own).
  const reaper = pipeline.runner as Partial<{ reap(): Promise<string[]> }>;
  reaper.reap?.().catch((error: unknown) => log.warn("could not reap old containers", { error }));

  const expire = () =>
    expireHeld(sql).catch((error: unknown) => log.warn("held expiry failed", { error }));
  void expire();
  const timer = setInterval(expire, HELD_EXPIRY_INTERVAL_MS);
  timer.unref();

  const stop = new AbortController();
  const done = runWorker(queue, scoringHandler(pipeline), {
    concurrency: pipeline.options.worker.concurrency,
    signal: stop.signal,
    onEvent: workerEvents(log),
  }).catch((error: unknown) => log.error("the scoring worker stopped", { error }));
  onClose(async () => {
    clearInterval(timer);
    stop.abort();
    await done;
  });
}

/** What the worker reports, in the log. */
export function workerEvents(log: Logger) {
  return (event: WorkerEvent<ScoreJob, ScoreResult>): void => {
    if (event.type === "error") log.warn("scoring worker error", { error: event.error });
    if (event.type === "lease_lost") {
      log.warn("a scoring job's lease was lost", {
        submission_id: event.job.payload?.submissionId,
        reason: event.reason,
      });
    }
    if (event.type === "failed" && event.status === "dead") {
      // Infrastructure kept failing for every attempt: the submission stays pending, nothing
      // lands on the miner; the operator fixes the cause and requeues it (the release route).
      log.error("a scoring job ran out of attempts; its submission stays pending", {
        submission_id: event.job.payload?.submissionId,
        error: event.error,
      });
    }
  };
}
