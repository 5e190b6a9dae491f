import { defaultWorkerId, emitter, type RunningJob, runJob } from "./_running-job.js";
import type { JobHandler, WorkerEvent } from "./job-handler.js";
import type { JobQueue } from "./job-queue.js";

/** Options of {@link runWorker}. */
export interface WorkerOptions<P = unknown, R = unknown> {
  /** Jobs handled at once by this worker (default 1). */
  concurrency?: number;
  /** Lease of each claim in seconds (default: the queue's, 30 s). */
  leaseSeconds?: number;
  /** Heartbeat period in seconds (default: a third of the lease). */
  heartbeatSeconds?: number;
  /** Wait between claims when the queue is empty (default 1000 ms). */
  pollIntervalMs?: number;
  /** Abort to stop: no new claims, running jobs get `shutdownGraceMs` to finish, then are released. */
  signal?: AbortSignal;
  /** Time running jobs get to finish after `signal` aborts (default 5000 ms). */
  shutdownGraceMs?: number;
  /** Default: host:pid:random. */
  workerId?: string;
  onEvent?: (event: WorkerEvent<P, R>) => void;
}

/** Resolves after `ms`, or as soon as `signal` aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** Waits for `promise`, at most `ms`, leaving no timer behind to hold the process open. */
async function settledWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  const timeout = new AbortController();
  await Promise.race([promise.finally(() => timeout.abort()), sleep(ms, timeout.signal)]);
}

function positive(value: number, what: string): number {
  if (!Number.isFinite(value) || value <= 0)
    throw new RangeError(`${what} must be a positive number, got ${value}`);
  return value;
}

/**
 * Claims and handles jobs until `signal` aborts, `concurrency` at a time, heartbeating each
 * lease while its handler runs; resolves once stopped. A job whose lease is lost is never
 * completed by this worker. Run as many workers, in as many processes, as the load needs.
 * @example
 * const stop = new AbortController();
 * process.once("SIGTERM", () => stop.abort());
 * await runWorker(queue, async (job, { signal }) => evaluate(job.payload, signal), { concurrency: 4, signal: stop.signal });
 */
export async function runWorker<P, R>(
  queue: JobQueue<P, R>,
  handler: JobHandler<P, R>,
  options: WorkerOptions<P, R> = {},
): Promise<void> {
  const workerId = options.workerId ?? defaultWorkerId();
  const concurrency = options.concurrency ?? 1;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1000) {
    throw new RangeError(`concurrency must be an integer in [1, 1000], got ${concurrency}`);
  }
  const leaseSeconds = positive(options.leaseSeconds ?? queue.leaseSeconds, "leaseSeconds");
  const heartbeatSeconds = positive(
    options.heartbeatSeconds ?? leaseSeconds / 3,
    "heartbeatSeconds",
  );
  if (heartbeatSeconds >= leaseSeconds) {
    throw new RangeError(
      `heartbeatSeconds (${heartbeatSeconds}) must be shorter than the lease (${leaseSeconds})`,
    );
  }
  const pollIntervalMs = positive(options.pollIntervalMs ?? 1000, "pollIntervalMs");
  const graceMs = options.shutdownGraceMs ?? 5000;
  const stop = options.signal;
  const emit = emitter(options.onEvent);
  const active = new Set<RunningJob>();
  const settled = () => Promise.all([...active].map((running) => running.done));
  let slotFreed: () => void = () => {};
  let failures = 0;

  while (!stop?.aborted) {
    if (active.size >= concurrency) {
      const wake = new AbortController();
      slotFreed = () => wake.abort();
      await sleep(2 ** 31 - 1, stop ? AbortSignal.any([stop, wake.signal]) : wake.signal);
      continue;
    }
    let job: Awaited<ReturnType<typeof queue.claim>>;
    try {
      job = await queue.claim({ workerId, leaseSeconds });
      failures = 0;
    } catch (error) {
      emit({ type: "error", workerId, error });
      // A database outage: back off (up to 30 s) rather than spin on it.
      failures++;
      await sleep(Math.min(pollIntervalMs * 2 ** Math.min(failures, 10), 30_000), stop);
      continue;
    }
    if (!job) {
      await sleep(pollIntervalMs, stop);
      continue;
    }
    emit({ type: "claimed", workerId, job });
    const running = runJob(queue, job, handler, { workerId, heartbeatSeconds, emit });
    active.add(running);
    void running.done.finally(() => {
      active.delete(running);
      slotFreed();
    });
    // Claimed while stopping: the loop ends now and the job gets the same grace as the others.
  }

  emit({ type: "stopping", workerId, active: active.size });
  if (active.size) {
    await settledWithin(settled(), graceMs);
    await Promise.all([...active].map((running) => running.release()));
    // Aborted handlers should return promptly; one that ignores its signal is not waited for forever.
    await settledWithin(settled(), graceMs);
  }
  emit({ type: "stopped", workerId });
}
