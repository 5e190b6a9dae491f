/**
 * @platform/challenge-sdk/jobs: a job queue in the challenge's own Postgres (leases, retries with
 * backoff, fenced completion) and the workers that drain it. docs/jobs-and-tasks.md.
 */

export { JobError, type JobErrorOptions } from "./job-error.js";
export {
  type JobContext,
  type JobHandler,
  type JobOutcome,
  LeaseLostError,
  type WorkerEvent,
  WorkerStoppingError,
} from "./job-handler.js";
export { migrateJobQueue } from "./job-migrations.js";
export {
  type BackoffOptions,
  type ClaimedJob,
  type ClaimOptions,
  createJobQueue,
  type EnqueueOptions,
  type EnqueueResult,
  type FailOptions,
  type FailResult,
  type Job,
  type JobLease,
  type JobQueue,
  type JobQueueOptions,
  type JobStats,
  type JobStatus,
  type ListJobsOptions,
} from "./job-queue.js";
export { type ProcessedJob, type ProcessNextOptions, processNext } from "./process-next.js";
export { runWorker, type WorkerOptions } from "./run-worker.js";
