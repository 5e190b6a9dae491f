import type { TransactionSql } from "@platform/core";
import type { ClaimedJob } from "./job-queue.js";

/** What a handler gets besides its job. */
export interface JobContext {
  /**
   * Aborted when the worker no longer holds the job (lease lost: `LeaseLostError`) or is
   * stopping and has given the job back (`WorkerStoppingError`). Pass it to everything
   * long-running (the task runner, fetch): whatever the handler returns then is discarded.
   */
  signal: AbortSignal;
  /** Who holds the lease. */
  workerId: string;
  /**
   * `queue.fence(job, tx)`: call first inside the transaction that stores the job's effects;
   * when it answers false the lease is lost, so throw and let the transaction roll back.
   */
  fence(tx: TransactionSql): Promise<boolean>;
}

/**
 * Processes one job and returns its result (stored as JSON). It may run more than once for one
 * job (at-least-once delivery), so its side effects must be idempotent; throwing fails the
 * attempt (see `JobError` for a permanent failure or a Retry-After).
 */
export type JobHandler<P = unknown, R = unknown> = (
  job: ClaimedJob<P, R>,
  context: JobContext,
) => Promise<R> | R;

/**
 * How one claimed job ended for this worker: `completed`; `retrying` or `dead` after a failure;
 * `lease_lost` (another claim or a cancel took it: nothing was recorded); `released` (given back
 * at shutdown); `unrecorded` (the database refused the outcome: the job runs again once its
 * lease expires).
 */
export type JobOutcome =
  | "completed"
  | "retrying"
  | "dead"
  | "lease_lost"
  | "released"
  | "unrecorded";

/** What a worker reports through `onEvent`, in the order it happens. */
export type WorkerEvent<P = unknown, R = unknown> =
  | { type: "claimed"; workerId: string; job: ClaimedJob<P, R> }
  | { type: "completed"; workerId: string; job: ClaimedJob<P, R>; result: R; durationMs: number }
  | {
      type: "failed";
      workerId: string;
      job: ClaimedJob<P, R>;
      error: unknown;
      /** `pending`: retried at `runAt`; `dead`: no attempt left, or not retryable. */
      status: "pending" | "dead";
      runAt: Date | null;
      durationMs: number;
    }
  | { type: "lease_lost"; workerId: string; job: ClaimedJob<P, R>; reason: string }
  | { type: "released"; workerId: string; job: ClaimedJob<P, R> }
  | { type: "error"; workerId: string; error: unknown; job?: ClaimedJob<P, R> }
  | { type: "stopping"; workerId: string; active: number }
  | { type: "stopped"; workerId: string };

/** The abort reason a handler sees when its job's lease was lost. */
export class LeaseLostError extends Error {
  override readonly name = "LeaseLostError";
}

/** The abort reason a handler sees when the worker stopped and gave its job back. */
export class WorkerStoppingError extends Error {
  override readonly name = "WorkerStoppingError";
}
