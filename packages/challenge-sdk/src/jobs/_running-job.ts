import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import {
  failSpan,
  runInSpan,
  startSpan,
  type TraceSpan,
  traceContextOf,
  tracingEnabled,
} from "@platform/core";
import { processMetrics } from "../_process-metrics.js";
import { retryHints } from "./job-error.js";
import {
  type JobHandler,
  type JobOutcome,
  LeaseLostError,
  type WorkerEvent,
  WorkerStoppingError,
} from "./job-handler.js";
import type { ClaimedJob, JobQueue } from "./job-queue.js";

/** A default worker id: host, process and a random suffix, so two workers of one process differ. */
export function defaultWorkerId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
}

/** Calls `onEvent`, never letting a listener's exception disturb the worker. */
export function emitter<P, R>(
  onEvent: ((event: WorkerEvent<P, R>) => void) | undefined,
): (event: WorkerEvent<P, R>) => void {
  return (event) => {
    try {
      onEvent?.(event);
    } catch {
      // A listener is for observation; its bugs must not lose or duplicate jobs.
    }
  };
}

/** Settings of one job's run. */
export interface RunJobOptions<P, R> {
  workerId: string;
  heartbeatSeconds: number;
  emit: (event: WorkerEvent<P, R>) => void;
}

/** A job being handled: its eventual outcome, and a way to give it back early. */
export interface RunningJob {
  done: Promise<JobOutcome>;
  /** Gives the job back (fenced) and aborts the handler; a no-op once the handler returned. */
  release(): Promise<void>;
}

/**
 * Runs `handler` on a claimed job while heartbeating its lease, then records the outcome with
 * the lease token. A lost lease aborts the handler and records nothing: fencing makes the
 * database refuse it anyway, and skipping it keeps a stale worker from even trying.
 */
export function runJob<P, R>(
  queue: JobQueue<P, R>,
  job: ClaimedJob<P, R>,
  handler: JobHandler<P, R>,
  options: RunJobOptions<P, R>,
): RunningJob {
  const { workerId, emit } = options;
  const controller = new AbortController();
  const started = Date.now();
  let lost: string | null = null;
  let released = false;
  let settled = false;
  let lastBeat = Date.now();
  let beating = false;

  const lose = (reason: string) => {
    if (lost !== null || released || settled) return;
    lost = reason;
    clearInterval(timer);
    emit({ type: "lease_lost", workerId, job, reason });
    controller.abort(new LeaseLostError(`Job ${job.id}: ${reason}`));
  };

  const beat = async () => {
    if (beating || lost !== null || released || settled) return;
    beating = true;
    const sent = Date.now();
    try {
      if (await queue.heartbeat(job)) lastBeat = sent;
      else
        lose(
          "the lease is no longer held (it expired and the job was claimed again, or it was cancelled)",
        );
    } catch (error) {
      emit({ type: "error", workerId, error, job });
      // The database may still count the lease as ours, but past its length we cannot know: stop.
      if (Date.now() - lastBeat >= job.leaseSeconds * 1000) {
        lose(`no heartbeat succeeded within the ${job.leaseSeconds} s lease`);
      }
    } finally {
      beating = false;
    }
  };
  const timer = setInterval(() => void beat(), options.heartbeatSeconds * 1000);

  const finish = async (): Promise<JobOutcome> => {
    let value: R | undefined;
    let thrown: unknown;
    let ok = false;
    const context = {
      signal: controller.signal,
      workerId,
      fence: (tx: Parameters<typeof queue.fence>[1]) => queue.fence(job, tx),
    };
    // With tracing on, the job runs in a span continuing the request that enqueued it.
    let span: TraceSpan | undefined;
    if (tracingEnabled()) {
      span = startSpan(`job ${queue.name}`, {
        kind: "consumer",
        parent: traceContextOf(job.traceParent),
        attributes: {
          "messaging.system": "platform.jobs",
          "messaging.destination.name": queue.name,
          "messaging.message.id": job.id,
          "job.attempt": job.attempts,
        },
      });
    }
    try {
      value = await (span ? runInSpan(span, () => handler(job, context)) : handler(job, context));
      ok = true;
    } catch (error) {
      thrown = error;
      if (span) failSpan(span, error);
    }
    span?.end();
    settled = true;
    clearInterval(timer);
    if (lost !== null) return "lease_lost";
    if (released) return "released";
    const durationMs = Date.now() - started;
    try {
      if (ok) {
        if (await queue.complete(job, value)) {
          emit({ type: "completed", workerId, job, result: value as R, durationMs });
          return "completed";
        }
      } else {
        const hints = retryHints(thrown);
        const failed = await queue.fail(job, thrown, {
          retryable: hints.retryable,
          ...(hints.retryAfterSeconds ? { delaySeconds: hints.retryAfterSeconds } : {}),
        });
        if (failed) {
          const runAt = failed.status === "pending" ? failed.runAt : null;
          emit({
            type: "failed",
            workerId,
            job,
            error: thrown,
            status: failed.status,
            runAt,
            durationMs,
          });
          return failed.status === "dead" ? "dead" : "retrying";
        }
      }
    } catch (error) {
      emit({ type: "error", workerId, error, job });
      return "unrecorded";
    }
    // The database refused the fenced write: another claim (or a cancel) owns the job now.
    emit({
      type: "lease_lost",
      workerId,
      job,
      reason: "the outcome was refused: the lease is no longer held",
    });
    return "lease_lost";
  };

  const release = async () => {
    if (settled || released || lost !== null) return;
    released = true;
    clearInterval(timer);
    try {
      if (await queue.release(job)) emit({ type: "released", workerId, job });
    } catch (error) {
      // Not released: the lease simply expires and another worker claims the job then.
      emit({ type: "error", workerId, error, job });
    }
    controller.abort(
      new WorkerStoppingError(`Worker ${workerId} is stopping; job ${job.id} was given back`),
    );
  };

  // challenge_job_duration_seconds: claim to recorded outcome, by queue and outcome.
  const done = finish().then((outcome) => {
    processMetrics().jobDuration.observe(
      { kind: queue.name, outcome },
      (Date.now() - started) / 1000,
    );
    return outcome;
  });
  return { done, release };
}
