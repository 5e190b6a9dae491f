import { defaultWorkerId, emitter, runJob } from "./_running-job.js";
import type { JobHandler, JobOutcome, WorkerEvent } from "./job-handler.js";
import type { ClaimedJob, JobQueue } from "./job-queue.js";

/** Options of {@link processNext}. */
export interface ProcessNextOptions<P = unknown, R = unknown> {
  /** Default: host:pid:random. */
  workerId?: string;
  /** Default: the queue's (30 s). */
  leaseSeconds?: number;
  /** Default: a third of the lease. */
  heartbeatSeconds?: number;
  /** Aborting gives the job back (released) and aborts the handler. */
  signal?: AbortSignal;
  onEvent?: (event: WorkerEvent<P, R>) => void;
}

/** What {@link processNext} did: the job it claimed and how that ended. */
export interface ProcessedJob<P = unknown, R = unknown> {
  job: ClaimedJob<P, R>;
  outcome: JobOutcome;
}

/**
 * Claims one job and handles it to the end (heartbeats, fenced outcome), or answers null when
 * no job is ready. For a "process one now" route or a cron tick; `runWorker` loops over it.
 * @example app.route({ method: "POST", path: "/internal/v1/worker/process-next", handler: () => processNext(queue, evaluate) });
 */
export async function processNext<P, R>(
  queue: JobQueue<P, R>,
  handler: JobHandler<P, R>,
  options: ProcessNextOptions<P, R> = {},
): Promise<ProcessedJob<P, R> | null> {
  const workerId = options.workerId ?? defaultWorkerId();
  const leaseSeconds = options.leaseSeconds ?? queue.leaseSeconds;
  if (options.signal?.aborted) return null;
  const job = await queue.claim({ workerId, leaseSeconds });
  if (!job) return null;
  const emit = emitter(options.onEvent);
  emit({ type: "claimed", workerId, job });
  const running = runJob(queue, job, handler, {
    workerId,
    heartbeatSeconds: options.heartbeatSeconds ?? leaseSeconds / 3,
    emit,
  });
  const onAbort = () => void running.release();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  try {
    return { job, outcome: await running.done };
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
  }
}
