import { setTimeout as sleep } from "node:timers/promises";
import type { Database } from "@platform/core";
import { createTestDatabase, testBackends } from "@platform/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JobError } from "./job-error.js";
import { LeaseLostError, type WorkerEvent, WorkerStoppingError } from "./job-handler.js";
import { migrateJobQueue } from "./job-migrations.js";
import { createJobQueue, type JobQueueOptions } from "./job-queue.js";
import { processNext } from "./process-next.js";
import { runWorker } from "./run-worker.js";

let counter = 0;

/** Resolves once `check` holds, polling; fails the test after `ms`. */
async function until(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await sleep(20);
  }
}

describe.each(await testBackends())("workers on %s", (backend) => {
  let db: Database;
  beforeAll(async () => {
    db = await createTestDatabase({ backend });
    await migrateJobQueue(db.sql);
  });
  afterAll(() => db?.close());

  const fresh = <P = unknown, R = unknown>(options: Partial<JobQueueOptions> = {}) =>
    createJobQueue<P, R>(db.sql, { queue: `w${process.pid}-${++counter}`, ...options });

  it("processes every job once with concurrency, completing each with the handler's result", async () => {
    const queue = fresh<{ n: number }, { doubled: number }>();
    for (let n = 0; n < 20; n++) await queue.enqueue({ n });
    const calls = new Map<number, number>();
    let inFlight = 0;
    let peak = 0;
    const stop = new AbortController();
    const events: WorkerEvent<{ n: number }, { doubled: number }>[] = [];
    const worker = runWorker(
      queue,
      async (job) => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        calls.set(job.payload.n, (calls.get(job.payload.n) ?? 0) + 1);
        await sleep(30);
        inFlight--;
        return { doubled: job.payload.n * 2 };
      },
      { concurrency: 4, pollIntervalMs: 20, signal: stop.signal, onEvent: (e) => events.push(e) },
    );
    await until(async () => (await queue.stats()).completed === 20);
    stop.abort();
    await worker;
    expect([...calls.values()].every((count) => count === 1)).toBe(true);
    expect(calls.size).toBe(20);
    expect(peak).toBeGreaterThan(1);
    expect(peak).toBeLessThanOrEqual(4);
    const jobs = await queue.list({ limit: 100 });
    expect(jobs.every((job) => job.result?.doubled === job.payload.n * 2)).toBe(true);
    expect(events.filter((e) => e.type === "completed")).toHaveLength(20);
    expect(events.at(-1)?.type).toBe("stopped");
  });

  it("retries a throwing handler with backoff, then completes", async () => {
    const queue = fresh({ backoff: { baseSeconds: 0.05, maxSeconds: 0.05 } });
    const { id } = await queue.enqueue({});
    let tries = 0;
    const stop = new AbortController();
    const events: WorkerEvent[] = [];
    const worker = runWorker(
      queue,
      () => {
        tries++;
        if (tries < 3) throw new Error(`flaky ${tries}`);
        return "third time";
      },
      { pollIntervalMs: 10, signal: stop.signal, onEvent: (e) => events.push(e) },
    );
    await until(async () => (await queue.get(id))?.status === "completed");
    stop.abort();
    await worker;
    expect(await queue.get(id)).toMatchObject({
      attempts: 3,
      result: "third time",
      lastError: "Error: flaky 2",
    });
    const failed = events.filter((e) => e.type === "failed");
    expect(failed.map((e) => e.type === "failed" && e.status)).toEqual(["pending", "pending"]);
  });

  it("a JobError that is not retryable buries the job at once; retryAfterSeconds delays the retry", async () => {
    const queue = fresh();
    const permanent = await queue.enqueue({ kind: "permanent" });
    const later = await queue.enqueue({ kind: "later" });
    const result = await processNext(queue, () => {
      throw new JobError("the bundle is not a ZIP", { retryable: false });
    });
    expect(result).toMatchObject({ outcome: "dead", job: { id: permanent.id } });
    expect(await queue.get(permanent.id)).toMatchObject({
      status: "dead",
      attempts: 1,
      lastError: "JobError: the bundle is not a ZIP",
    });

    const before = Date.now();
    const retried = await processNext(queue, () => {
      // Any error carrying the hints works, as a quota error from the task runner does.
      throw Object.assign(new Error("quota"), { retryable: true, retryAfterSeconds: 120 });
    });
    expect(retried?.outcome).toBe("retrying");
    expect((await queue.get(later.id))!.runAt.getTime() - before).toBeGreaterThan(115_000);
  });

  it("heartbeats keep a long job's lease: a second worker cannot take it", async () => {
    const queue = fresh();
    const { id } = await queue.enqueue({});
    const stop = new AbortController();
    let runs = 0;
    const slow = runWorker(
      queue,
      async () => {
        runs++;
        await sleep(3_000);
        return "slow";
      },
      {
        leaseSeconds: 2,
        heartbeatSeconds: 0.25,
        pollIntervalMs: 20,
        signal: stop.signal,
        workerId: "slow",
      },
    );
    await until(async () => (await queue.get(id))?.status === "running");
    const thief = runWorker(queue, () => "thief", {
      leaseSeconds: 2,
      pollIntervalMs: 50,
      signal: stop.signal,
      workerId: "thief",
    });
    await until(async () => (await queue.get(id))?.status === "completed", 15_000);
    stop.abort();
    await Promise.all([slow, thief]);
    expect(runs).toBe(1);
    expect(await queue.get(id)).toMatchObject({ result: "slow", leaseOwner: "slow", attempts: 1 });
  });

  it("a worker that lost its lease aborts its handler and never completes the job", async () => {
    const queue = fresh();
    const { id } = await queue.enqueue({});
    const events: WorkerEvent[] = [];
    let reason: unknown;
    const stop = new AbortController();
    const worker = runWorker(
      queue,
      async (_job, { signal }) => {
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
        reason = signal.reason;
        // Returning after the abort must not complete the job.
        return "stale result";
      },
      {
        leaseSeconds: 30,
        heartbeatSeconds: 0.2,
        pollIntervalMs: 20,
        signal: stop.signal,
        workerId: "A",
        onEvent: (e) => events.push(e),
      },
    );
    await until(async () => (await queue.get(id))?.status === "running");
    // Its lease expires (as if A had been paused) and B takes the job over.
    await db.sql`update sdk_jobs set lease_expires_at = now() - interval '1 second' where id = ${id}::bigint`;
    const taken = (await queue.claim({ workerId: "B" }))!;
    expect(taken.leaseToken).toBe(2);
    await until(() => reason !== undefined);
    expect(reason).toBeInstanceOf(LeaseLostError);
    await until(() => events.some((e) => e.type === "lease_lost"));
    await sleep(100);
    expect(events.some((e) => e.type === "completed")).toBe(false);
    expect(await queue.get(id)).toMatchObject({ status: "running", leaseOwner: "B", result: null });
    expect(await queue.complete(taken, "from B")).toBe(true);
    stop.abort();
    await worker;
  });

  it("a cancelled running job aborts its handler through the failed heartbeat", async () => {
    const queue = fresh();
    const { id } = await queue.enqueue({});
    let aborted = false;
    const result = processNext(
      queue,
      async (_job, { signal }) => {
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
        aborted = true;
        return "ignored";
      },
      { leaseSeconds: 30, heartbeatSeconds: 0.1 },
    );
    await until(async () => (await queue.get(id))?.status === "running");
    expect(await queue.cancel(id, "owner")).toBe(true);
    expect((await result)?.outcome).toBe("lease_lost");
    expect(aborted).toBe(true);
    expect((await queue.get(id))?.status).toBe("cancelled");
  });

  it("stops gracefully: a job that finishes within the grace completes", async () => {
    const queue = fresh();
    const { id } = await queue.enqueue({});
    const stop = new AbortController();
    let started = false;
    const worker = runWorker(
      queue,
      async () => {
        started = true;
        await sleep(300);
        return "finished";
      },
      { pollIntervalMs: 10, signal: stop.signal, shutdownGraceMs: 5_000 },
    );
    await until(() => started);
    stop.abort();
    await worker;
    expect(await queue.get(id)).toMatchObject({ status: "completed", result: "finished" });
  });

  it("stops gracefully: a job still running after the grace is released, its handler aborted", async () => {
    const queue = fresh();
    const { id } = await queue.enqueue({});
    const stop = new AbortController();
    let reason: unknown;
    const events: WorkerEvent[] = [];
    const worker = runWorker(
      queue,
      async (_job, { signal }) => {
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
        reason = signal.reason;
        return "too late";
      },
      {
        pollIntervalMs: 10,
        signal: stop.signal,
        shutdownGraceMs: 200,
        onEvent: (e) => events.push(e),
      },
    );
    await until(async () => (await queue.get(id))?.status === "running");
    const stopped = Date.now();
    stop.abort();
    await worker;
    // Within its shutdown grace (200 ms), with room for a loaded machine: not a poll-forever.
    expect(Date.now() - stopped).toBeLessThan(10 * 200);
    expect(reason).toBeInstanceOf(WorkerStoppingError);
    // Given back without spending an attempt, and not completed by the returning handler.
    expect(await queue.get(id)).toMatchObject({ status: "pending", attempts: 0, result: null });
    expect(events.map((e) => e.type)).toEqual(["claimed", "stopping", "released", "stopped"]);
    const next = await processNext(queue, () => "next worker");
    expect(next?.outcome).toBe("completed");
  });

  it("processNext answers null on an empty queue, and survives a throwing event listener", async () => {
    const queue = fresh();
    expect(await processNext(queue, () => "x")).toBeNull();
    const { id } = await queue.enqueue({});
    const done = await processNext(queue, () => "x", {
      onEvent: () => {
        throw new Error("listener bug");
      },
    });
    expect(done).toMatchObject({ outcome: "completed", job: { id } });

    // The handler's context fences its own transaction on its own lease.
    const fencedJob = await queue.enqueue({});
    const fenced = await processNext(queue, (_job, context) =>
      db.sql.begin((tx) => context.fence(tx)),
    );
    expect(fenced).toMatchObject({ outcome: "completed", job: { id: fencedJob.id } });
    expect((await queue.get(fencedJob.id))?.result).toBe(true);
  });

  it("refuses impossible worker settings", async () => {
    const queue = fresh();
    await expect(runWorker(queue, () => 1, { concurrency: 0 })).rejects.toThrow(/concurrency/);
    await expect(
      runWorker(queue, () => 1, { leaseSeconds: 1, heartbeatSeconds: 2 }),
    ).rejects.toThrow(/heartbeatSeconds/);
    await expect(runWorker(queue, () => 1, { pollIntervalMs: -1 })).rejects.toThrow(
      /pollIntervalMs/,
    );
  });
});
