/**
 * What every pipeline stage is handed: the database, the task runner, the run configuration,
 * the LLM gate and the logger of one challenge instance. Built once by `setup`.
 */
import type { Logger, Sql } from "@platform/challenge-sdk";
import type { TaskRunner } from "@platform/challenge-sdk/tasks";
import type { SubmissionState } from "../api-schemas.js";
import type { Corpus } from "../corpus.js";
import type { LlmGate } from "../llm-gate/index.js";
import type { ScoringOptions } from "../settings.js";

/** The pipeline's dependencies. */
export interface PipelineDeps {
  sql: Sql;
  runner: TaskRunner;
  options: ScoringOptions;
  /** The pool every run's scored bytes are drawn from (scored-bytes.ts). */
  corpus: Corpus;
  /** What each epoch's windows are drawn from (window-secret.ts); never logged or served. */
  windowSecret: Buffer;
  /** The reviewer; null when LLM_GATE=off, or required with no reviewer configured. */
  llm: LlmGate | null;
  log: Logger;
}

/** A queue job: one submission to take through the pipeline. */
export interface ScoreJob {
  submissionId: string;
}

/** What a finished job records: where the submission ended up (`skipped`: nothing to do). */
export interface ScoreResult {
  submission_id: string;
  status: SubmissionState | "skipped";
}

/** The queue's name, and how patiently infrastructure failures are retried. */
export const SCORE_QUEUE = {
  queue: "scoring",
  // A lease is renewed every third of it while a stage runs; a killed worker's job is claimable
  // again this long after its last heartbeat.
  leaseSeconds: 60,
  backoff: { baseSeconds: 5, maxSeconds: 300 },
} as const;

/**
 * Claims a job may take. A wait for the platform (no executor, the image missing, no GPU free:
 * nothing of the bundle runs) is retried with backoff capped at 5 min for about a day; then the
 * job is dead, the submission stays pending, and the operator's release requeues it.
 */
export const SCORE_MAX_ATTEMPTS = 288;

/**
 * Failures of the platform while it evaluated a bundle (the harness, the database, a bug) before
 * the bundle is failed with a sentence saying the platform could not evaluate it: each retry runs
 * the bundle again, so a bundle that somehow keeps breaking the platform cannot loop.
 */
export const MAX_PLATFORM_FAILURES = 5;
