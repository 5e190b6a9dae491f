import type { Database } from "@platform/core";
import { createTestDatabase, testBackends } from "@platform/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobQueueMigrations, migrateJobQueue } from "./job-migrations.js";
import { createJobQueue, type JobQueueOptions } from "./job-queue.js";

let counter = 0;

describe.each(await testBackends())("job queue on %s", (backend) => {
  let db: Database;
  beforeAll(async () => {
    db = await createTestDatabase({ backend });
    await migrateJobQueue(db.sql);
  });
  afterAll(() => db?.close());

  /** A queue of its own per test: tests share one database and never see each other's jobs. */
  const fresh = <P = unknown, R = unknown>(options: Partial<JobQueueOptions> = {}) =>
    createJobQueue<P, R>(db.sql, { queue: `q${process.pid}-${++counter}`, ...options });
  /** Ends a job's lease now, as if its holder had stopped heartbeating long ago. */
  const expire = (id: string) =>
    db.sql`update sdk_jobs set lease_expires_at = now() - interval '1 second' where id = ${id}::bigint`;
  /** Makes a retried job due now. */
  const due = (id: string) =>
    db.sql`update sdk_jobs set run_at = now() - interval '1 second' where id = ${id}::bigint`;
  const dbNow = async () => (await db.sql<{ now: Date }[]>`select now() as now`)[0]!.now.getTime();

  it("ships its migration as version 10 and up, applied under the sdk namespace once", async () => {
    const migrations = await jobQueueMigrations();
    expect(migrations.map((m) => m.version)).toEqual([10, 11]);
    await migrateJobQueue(db.sql); // again: a no-op
    const rows = await db.sql`select version from platform_migrations where namespace = 'sdk'`;
    expect(rows.map((row) => row.version)).toEqual([10, 11]);
  });

  it("enqueues a pending job with the defaults and reads it back", async () => {
    const queue = fresh<{ n: number; tags: string[] }>();
    const { id, created } = await queue.enqueue({ n: 1, tags: ["a"] });
    expect(created).toBe(true);
    const job = await queue.get(id);
    expect(job).toMatchObject({
      id,
      queue: queue.name,
      key: null,
      payload: { n: 1, tags: ["a"] },
      status: "pending",
      priority: 0,
      attempts: 0,
      maxAttempts: 5,
      leaseToken: 0,
      leaseOwner: null,
      result: null,
      lastError: null,
    });
    expect(job!.runAt.getTime()).toBeLessThanOrEqual(await dbNow());
  });

  it("dedupes by key: the same key returns the existing job, even under concurrent enqueues", async () => {
    const queue = fresh();
    const first = await queue.enqueue({ v: 1 }, { key: "submission-7" });
    const again = await queue.enqueue({ v: 2 }, { key: "submission-7" });
    expect(again).toEqual({ id: first.id, created: false });
    // The first payload stays: a duplicate never overwrites.
    expect((await queue.get(first.id))?.payload).toEqual({ v: 1 });

    const racing = await Promise.all(
      Array.from({ length: 8 }, (_, i) => queue.enqueue({ i }, { key: "raced" })),
    );
    expect(new Set(racing.map((r) => r.id)).size).toBe(1);
    expect(racing.filter((r) => r.created)).toHaveLength(1);

    // A key is scoped to its queue.
    const other = fresh();
    expect((await other.enqueue({}, { key: "submission-7" })).id).not.toBe(first.id);
    expect((await queue.stats()).pending).toBe(2);
  });

  it("enqueues inside the caller's transaction: a rollback leaves no job", async () => {
    const queue = fresh();
    await expect(
      db.sql.begin(async (tx) => {
        await queue.enqueue({ a: 1 }, { tx, key: "k" });
        throw new Error("the submission insert failed");
      }),
    ).rejects.toThrow("the submission insert failed");
    expect(await queue.stats()).toMatchObject({ pending: 0 });
    await db.sql.begin((tx) => queue.enqueue({ a: 2 }, { tx, key: "k" }));
    expect((await queue.list())[0]?.payload).toEqual({ a: 2 });
  });

  it("claims with a lease: attempt 1, fencing token 1, owner and expiry set; nothing left after", async () => {
    const queue = fresh();
    const { id } = await queue.enqueue({ x: 1 });
    const before = await dbNow();
    const job = await queue.claim({ workerId: "w1", leaseSeconds: 60 });
    const after = Date.now();
    expect(job).toMatchObject({
      id,
      status: "running",
      attempts: 1,
      leaseToken: 1,
      leaseOwner: "w1",
      leaseSeconds: 60,
    });
    // The lease runs 60 s from the claim, which happened between `before` and `after` (a
    // window, however long a loaded machine makes it; 1 s of slack for the database's clock).
    expect(job!.leaseExpiresAt.getTime()).toBeGreaterThanOrEqual(before + 60_000 - 1_000);
    expect(job!.leaseExpiresAt.getTime()).toBeLessThanOrEqual(after + 60_000 + 1_000);
    expect(await queue.claim({ workerId: "w2" })).toBeNull();
  });

  it("claims by priority, then schedule, then age; never before runAt or delaySeconds", async () => {
    const queue = fresh();
    const low = await queue.enqueue("low");
    const high = await queue.enqueue("high", { priority: 5 });
    const later = await queue.enqueue("later", { delaySeconds: 3600, priority: 10 });
    const future = await queue.enqueue("future", { runAt: new Date(Date.now() + 3_600_000) });
    const low2 = await queue.enqueue("low2");
    const order: string[] = [];
    for (;;) {
      const job = await queue.claim({ workerId: "w" });
      if (!job) break;
      order.push(job.id);
    }
    expect(order).toEqual([high.id, low.id, low2.id]);
    expect((await queue.get(later.id))?.status).toBe("pending");
    await due(later.id);
    await due(future.id);
    expect((await queue.claim({ workerId: "w" }))?.id).toBe(later.id);
    expect((await queue.claim({ workerId: "w" }))?.id).toBe(future.id);
  });

  it("completes exactly once: a second complete returns false and changes nothing", async () => {
    const queue = fresh<unknown, { score: number }>();
    const { id } = await queue.enqueue({});
    const job = (await queue.claim({ workerId: "w" }))!;
    expect(await queue.complete(job, { score: 0.5 })).toBe(true);
    const done = await queue.get(id);
    expect(done).toMatchObject({
      status: "completed",
      result: { score: 0.5 },
      leaseOwner: "w",
      leaseExpiresAt: null,
    });
    expect(done!.finishedAt).toBeInstanceOf(Date);

    expect(await queue.complete(job, { score: 99 })).toBe(false);
    expect(await queue.fail(job, new Error("late"))).toBeNull();
    expect(await queue.heartbeat(job)).toBe(false);
    expect(await queue.release(job)).toBe(false);
    expect(await queue.get(id)).toEqual(done);
  });

  it("fences a stale worker: after its lease expired and another claimed, none of its calls land", async () => {
    const queue = fresh<unknown, string>();
    const { id } = await queue.enqueue({});
    const stale = (await queue.claim({ workerId: "A", leaseSeconds: 30 }))!;
    await expire(id);
    const fresh2 = (await queue.claim({ workerId: "B", leaseSeconds: 30 }))!;
    expect(fresh2).toMatchObject({ id, attempts: 2, leaseToken: 2, leaseOwner: "B" });
    expect(fresh2.lastError).toMatch(/lease expired at attempt 1/);

    expect(await queue.heartbeat(stale)).toBe(false);
    expect(await queue.complete(stale, "from A")).toBe(false);
    expect(await queue.fail(stale, new Error("A failed"))).toBeNull();
    expect(await queue.release(stale)).toBe(false);
    // A forged token is no better than a stale one.
    expect(await queue.complete({ id, leaseToken: 3 }, "forged")).toBe(false);
    expect(await queue.get(id)).toMatchObject({
      status: "running",
      leaseOwner: "B",
      leaseToken: 2,
    });

    expect(await queue.complete(fresh2, "from B")).toBe(true);
    expect(await queue.get(id)).toMatchObject({
      status: "completed",
      result: "from B",
      leaseOwner: "B",
    });
  });

  it("heartbeat extends the lease only while the token holds", async () => {
    const queue = fresh();
    const { id } = await queue.enqueue({});
    const job = (await queue.claim({ workerId: "w", leaseSeconds: 5 }))!;
    await expire(id);
    // Expired but not yet claimed by anyone: the holder is still the holder.
    expect(await queue.heartbeat(job, 120)).toBe(true);
    const extended = (await queue.get(id))!.leaseExpiresAt!.getTime();
    expect(extended - (await dbNow())).toBeGreaterThan(110_000);
    // So nobody can take it now.
    expect(await queue.claim({ workerId: "other" })).toBeNull();
  });

  it("retries a failure after an exponential, jittered backoff, then succeeds", async () => {
    let jitter = 0;
    const queue = fresh({ backoff: { baseSeconds: 10, maxSeconds: 1000 }, random: () => jitter });
    const { id } = await queue.enqueue({});

    const first = (await queue.claim({ workerId: "w" }))!;
    const t1 = await dbNow();
    const r1 = await queue.fail(first, new TypeError("boom"));
    // attempt 1: d = 10 s; jitter 0 gives d/2.
    expect(r1).toMatchObject({ status: "pending", attempts: 1 });
    const wait1 = (r1 as { runAt: Date }).runAt.getTime() - t1;
    expect(wait1).toBeGreaterThanOrEqual(4_900);
    expect(wait1).toBeLessThanOrEqual(6_000);
    expect(await queue.get(id)).toMatchObject({ status: "pending", lastError: "TypeError: boom" });
    expect(await queue.claim({ workerId: "w" })).toBeNull();

    await due(id);
    jitter = 1;
    const second = (await queue.claim({ workerId: "w" }))!;
    expect(second).toMatchObject({ attempts: 2, leaseToken: 2 });
    const t2 = await dbNow();
    const r2 = await queue.fail(second, new Error("again"));
    // attempt 2: d = 20 s; jitter 1 gives d.
    const wait2 = (r2 as { runAt: Date }).runAt.getTime() - t2;
    expect(wait2).toBeGreaterThanOrEqual(19_900);
    expect(wait2).toBeLessThanOrEqual(21_000);

    await due(id);
    const third = (await queue.claim({ workerId: "w" }))!;
    expect(await queue.complete(third, "ok")).toBe(true);
    expect(await queue.get(id)).toMatchObject({ status: "completed", attempts: 3 });
  });

  it("caps the backoff at maxSeconds and honours a longer Retry-After", async () => {
    const queue = fresh({ backoff: { baseSeconds: 100, maxSeconds: 150 }, random: () => 1 });
    const { id } = await queue.enqueue({}, { maxAttempts: 10 });
    for (let i = 0; i < 3; i++) {
      await due(id);
      const job = (await queue.claim({ workerId: "w" }))!;
      await queue.fail(job, "x");
    }
    const capped = (await queue.get(id))!.runAt.getTime() - (await dbNow());
    expect(capped).toBeLessThanOrEqual(151_000);
    expect(capped).toBeGreaterThan(140_000);

    await due(id);
    const job = (await queue.claim({ workerId: "w" }))!;
    const result = await queue.fail(job, "quota", { delaySeconds: 900 });
    const waited = (result as { runAt: Date }).runAt.getTime() - (await dbNow());
    expect(waited).toBeGreaterThan(899_000);
  });

  it("goes dead after maxAttempts, keeping the last error; a dead job is never claimed", async () => {
    const queue = fresh({ backoff: { baseSeconds: 0.001, maxSeconds: 0.001 } });
    const { id } = await queue.enqueue({}, { maxAttempts: 2 });
    const a = (await queue.claim({ workerId: "w" }))!;
    expect(await queue.fail(a, new Error("first"))).toMatchObject({ status: "pending" });
    await due(id);
    const b = (await queue.claim({ workerId: "w" }))!;
    expect(await queue.fail(b, new Error("second"))).toEqual({ status: "dead", attempts: 2 });
    const dead = await queue.get(id);
    expect(dead).toMatchObject({ status: "dead", attempts: 2, lastError: "Error: second" });
    expect(dead!.finishedAt).toBeInstanceOf(Date);
    await due(id);
    expect(await queue.claim({ workerId: "w" })).toBeNull();
  });

  it("a non-retryable failure is dead at once", async () => {
    const queue = fresh();
    const { id } = await queue.enqueue({});
    const job = (await queue.claim({ workerId: "w" }))!;
    const error = Object.assign(new Error("bad bundle"), { code: "invalid_zip" });
    expect(await queue.fail(job, error, { retryable: false })).toEqual({
      status: "dead",
      attempts: 1,
    });
    expect((await queue.get(id))?.lastError).toBe("Error: bad bundle [invalid_zip]");
  });

  it("stores an error quoting NUL or a lone surrogate (a submission's text) cleaned, and the failure lands", async () => {
    const queue = fresh();
    const { id } = await queue.enqueue({});
    const job = (await queue.claim({ workerId: "w" }))!;
    const error = new Error(`train: ValueError: a\u0000b \uD800 ${"x".repeat(8200)}\u{1F600}`);
    expect(await queue.fail(job, error)).toMatchObject({ status: "pending" });
    const lastError = (await queue.get(id))!.lastError!;
    expect(lastError.startsWith("Error: train: ValueError: a\uFFFDb \uFFFD x")).toBe(true);
    expect(lastError).toHaveLength(8192);
    expect(lastError.endsWith("x…")).toBe(true);
  });

  it("reclaims an expired lease, and buries a job whose worker was lost at its last attempt", async () => {
    const queue = fresh();
    const { id } = await queue.enqueue({}, { maxAttempts: 2 });
    await queue.claim({ workerId: "killed-1" });
    await expire(id);
    const second = (await queue.claim({ workerId: "killed-2" }))!;
    expect(second.attempts).toBe(2);
    await expire(id);
    // No attempt left: the next claim marks it dead instead of handing it out a third time.
    expect(await queue.claim({ workerId: "w" })).toBeNull();
    expect(await queue.get(id)).toMatchObject({ status: "dead", attempts: 2 });
    expect((await queue.get(id))?.lastError).toMatch(/lease expired at attempt 2 of 2/);
  });

  it("fence lets only the current holder write its effects in its transaction", async () => {
    const queue = fresh();
    const table = `effects_${process.pid}_${++counter}`;
    await db.sql.unsafe(`create table ${table} (job_id bigint primary key, writer text)`);
    const { id } = await queue.enqueue({});
    const stale = (await queue.claim({ workerId: "A" }))!;
    await expire(id);
    const current = (await queue.claim({ workerId: "B" }))!;

    // The stale holder's transaction is refused before it writes anything.
    await expect(
      db.sql.begin(async (tx) => {
        if (!(await queue.fence(stale, tx))) throw new Error("lease lost");
        await tx`insert into ${tx(table)} values (${id}, 'A')`;
      }),
    ).rejects.toThrow("lease lost");
    await db.sql.begin(async (tx) => {
      expect(await queue.fence(current, tx)).toBe(true);
      await tx`insert into ${tx(table)} values (${id}, 'B')`;
    });
    expect(await db.sql.unsafe(`select writer from ${table}`)).toEqual([{ writer: "B" }]);
    expect(await db.sql.begin((tx) => queue.fence({ id: "abc", leaseToken: 1 }, tx))).toBe(false);
  });

  it.skipIf(backend !== "postgres")(
    "while a fence is held, nobody can claim the job even with its lease expired",
    async () => {
      const queue = fresh();
      const { id } = await queue.enqueue({});
      const holder = (await queue.claim({ workerId: "A" }))!;
      await expire(id);
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let fenced!: () => void;
      const isFenced = new Promise<void>((resolve) => {
        fenced = resolve;
      });
      const transaction = db.sql.begin(async (tx) => {
        expect(await queue.fence(holder, tx)).toBe(true);
        fenced();
        await held;
      });
      await isFenced;
      // Another connection: the locked row is skipped, not handed out.
      expect(await queue.claim({ workerId: "B" })).toBeNull();
      release();
      await transaction;
      expect((await queue.claim({ workerId: "B" }))?.leaseToken).toBe(2);
    },
  );

  it("release gives the job back without counting the attempt", async () => {
    const queue = fresh();
    const { id } = await queue.enqueue({});
    const job = (await queue.claim({ workerId: "w" }))!;
    expect(await queue.release(job)).toBe(true);
    expect(await queue.get(id)).toMatchObject({
      status: "pending",
      attempts: 0,
      leaseExpiresAt: null,
    });
    const again = (await queue.claim({ workerId: "w2" }))!;
    expect(again).toMatchObject({ attempts: 1, leaseToken: 2 });
    // The released claim can no longer act.
    expect(await queue.complete(job)).toBe(false);
  });

  it("cancel stops a pending job, and fences out the worker of a running one", async () => {
    const queue = fresh();
    const pending = await queue.enqueue({});
    expect(await queue.cancel(pending.id, "owner asked")).toBe(true);
    expect(await queue.get(pending.id)).toMatchObject({
      status: "cancelled",
      lastError: "cancelled: owner asked",
    });

    const running = await queue.enqueue({});
    const job = (await queue.claim({ workerId: "w" }))!;
    expect(job.id).toBe(running.id);
    expect(await queue.cancel(running.id)).toBe(true);
    expect(await queue.heartbeat(job)).toBe(false);
    expect(await queue.complete(job)).toBe(false);
    expect(await queue.cancel(running.id)).toBe(false);
    expect(await queue.claim({ workerId: "w" })).toBeNull();
  });

  it("never gives one job to two concurrent claimers", async () => {
    const queue = fresh();
    const ids = new Set<string>();
    for (let i = 0; i < 25; i++) ids.add((await queue.enqueue({ i })).id);
    const claims = await Promise.all(
      Array.from({ length: 40 }, (_, i) => queue.claim({ workerId: `w${i}` })),
    );
    const got = claims.filter((job) => job !== null).map((job) => job.id);
    expect(got).toHaveLength(25);
    expect(new Set(got)).toEqual(ids);
    expect(await queue.stats()).toEqual({
      pending: 0,
      running: 25,
      completed: 0,
      dead: 0,
      cancelled: 0,
    });
  });

  it("counts by status and lists newest first, by status and page", async () => {
    const queue = fresh();
    const a = await queue.enqueue("a");
    const b = await queue.enqueue("b");
    const c = await queue.enqueue("c");
    const job = (await queue.claim({ workerId: "w" }))!;
    await queue.complete(job);
    await queue.cancel(c.id);
    expect(await queue.stats()).toEqual({
      pending: 1,
      running: 0,
      completed: 1,
      dead: 0,
      cancelled: 1,
    });
    expect((await queue.list()).map((j) => j.id)).toEqual([c.id, b.id, a.id]);
    expect((await queue.list({ status: "completed" })).map((j) => j.id)).toEqual([a.id]);
    expect((await queue.list({ limit: 1, beforeId: c.id })).map((j) => j.id)).toEqual([b.id]);
  });

  it("keeps queues apart: one queue cannot read or finish another's job", async () => {
    const mine = fresh();
    const theirs = fresh();
    const { id } = await theirs.enqueue({ secret: true });
    expect(await mine.get(id)).toBeNull();
    expect(await mine.claim({ workerId: "w" })).toBeNull();
    expect(await mine.cancel(id)).toBe(false);
    const job = (await theirs.claim({ workerId: "w" }))!;
    expect(await mine.complete(job)).toBe(false);
    expect(await mine.heartbeat(job)).toBe(false);
    expect((await theirs.get(id))?.status).toBe("running");
  });

  it("refuses bad input clearly and writes nothing", async () => {
    const queue = fresh();
    await expect(queue.enqueue({ n: 1n } as never)).rejects.toThrow(/JSON-serialisable/);
    await expect(queue.enqueue(undefined as never)).rejects.toThrow(/JSON-serialisable/);
    await expect(queue.enqueue({ name: "a\u0000b" })).rejects.toThrow(/NUL/);
    await expect(queue.enqueue({}, { key: "" })).rejects.toThrow(/key/);
    await expect(queue.enqueue({}, { maxAttempts: 0 })).rejects.toThrow(/maxAttempts/);
    await expect(queue.enqueue({}, { maxAttempts: 1.5 })).rejects.toThrow(/maxAttempts/);
    await expect(queue.enqueue({}, { delaySeconds: -1 })).rejects.toThrow(/delaySeconds/);
    await expect(queue.enqueue({}, { runAt: new Date("nope") })).rejects.toThrow(/runAt/);
    await expect(queue.enqueue({}, { runAt: new Date(), delaySeconds: 1 })).rejects.toThrow(
      /either/,
    );
    await expect(queue.claim({ workerId: "" })).rejects.toThrow(/workerId/);
    await expect(queue.claim({ workerId: "w", leaseSeconds: 0 })).rejects.toThrow(/leaseSeconds/);
    expect(await queue.stats()).toEqual({
      pending: 0,
      running: 0,
      completed: 0,
      dead: 0,
      cancelled: 0,
    });

    // Ids that could not exist are answered, not sent to the database to fail there.
    for (const id of ["", "abc", "1; drop table sdk_jobs", "-1", "0", "99999999999999999999"]) {
      expect(await queue.get(id)).toBeNull();
      expect(await queue.cancel(id)).toBe(false);
      expect(await queue.complete({ id, leaseToken: 1 })).toBe(false);
    }
    expect(await queue.heartbeat({ id: "1", leaseToken: Number.NaN })).toBe(false);
    expect(() => createJobQueue(db.sql, { queue: "bad name!" })).toThrow(/Queue name/);
    expect(() => createJobQueue(db.sql, { queue: "" })).toThrow(/Queue name/);
  });
});
