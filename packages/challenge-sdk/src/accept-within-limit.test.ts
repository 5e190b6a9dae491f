// The acceptance limit is only as good as its transaction: these are its attacks, on both
// databases. Racing acceptances of one key (on PostgreSQL every transaction is open before any
// counts; on PGlite, one session, they queue), an acceptance refused after it was counted, and a
// process clock that lies.
import { type Database, HttpError } from "@platform/core";
import { createTestDatabase, testBackends } from "@platform/core/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { migrateSdk } from "./_sdk-migrations.js";
import { acceptWithinLimit } from "./accept-within-limit.js";
import { databaseNow } from "./database-now.js";

let counter = 0;
const bucket = () => `accept-${process.pid}-${++counter}`;

/** Resolves once `parties` callers have arrived. */
function barrier(parties: number): () => Promise<void> {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return () => {
    arrived += 1;
    if (arrived === parties) open();
    return opened;
  };
}

describe.each(await testBackends())("acceptWithinLimit on %s", (backend) => {
  let db: Database;
  beforeAll(async () => {
    db = await createTestDatabase({ backend });
    await migrateSdk(db.sql);
    await db.sql`create table accepted (id serial primary key, bucket text not null, key text not null)`;
  });
  afterAll(() => db?.close());
  afterEach(() => {
    vi.useRealTimers();
  });

  /** One accepting transaction: count, then store; `between` runs after both (before commit). */
  const accept = (
    b: string,
    options: {
      limit?: number;
      key?: string;
      arrive?: () => Promise<void>;
      between?: () => void;
    } = {},
  ) =>
    db.sql.begin(async (tx) => {
      const key = options.key ?? "5Hotkey";
      await tx`insert into accepted (bucket, key) values (${b}, ${key})`;
      await options.arrive?.();
      await acceptWithinLimit(tx, {
        bucket: b,
        key,
        limit: options.limit ?? 1,
        windowSeconds: 3600,
      });
      options.between?.();
      return key;
    });
  const stored = async (b: string) =>
    (await db.sql<{ n: number }[]>`select count(*)::int as n from accepted where bucket = ${b}`)[0]!
      .n;
  const hits = async (b: string) =>
    (
      await db.sql<{ n: number }[]>`
        select coalesce(sum(cardinality(hits)), 0)::int as n from sdk_rate_limits where bucket = ${b}`
    )[0]!.n;

  it("racing acceptances of one key: exactly `limit` commit, the rest are 429", async () => {
    for (const limit of [1, 2]) {
      const b = bucket();
      const parties = 3;
      // On PostgreSQL all three transactions have written before any counts (the pool holds 4).
      const arrive = backend === "postgres" ? barrier(parties) : undefined;
      const outcomes = await Promise.allSettled(
        Array.from({ length: parties }, () => accept(b, { limit, ...(arrive ? { arrive } : {}) })),
      );
      expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(limit);
      for (const o of outcomes) {
        if (o.status === "rejected") expect((o.reason as HttpError).status).toBe(429);
      }
      expect(await stored(b)).toBe(limit);
      expect(await hits(b)).toBe(limit);
    }
  });

  it("an acceptance refused after it was counted uses no slot (its transaction rolls back)", async () => {
    const b = bucket();
    const refused = accept(b, {
      between: () => {
        throw new HttpError(409, "duplicate_artifact", "refused after the count");
      },
    });
    await expect(refused).rejects.toMatchObject({ status: 409 });
    expect(await hits(b)).toBe(0);
    // The hotkey's one slot is still there, and is taken by its next real acceptance.
    await expect(accept(b)).resolves.toBe("5Hotkey");
    await expect(accept(b)).rejects.toMatchObject({ status: 429 });
    // A 429 takes nothing either: still one hit, one stored row.
    expect(await hits(b)).toBe(1);
    expect(await stored(b)).toBe(1);
    // Another key has its own count.
    await expect(accept(b, { key: "5Other" })).resolves.toBe("5Other");
  });

  it("answers 429 with a stable code, Retry-After and next_allowed_at", async () => {
    const b = bucket();
    await accept(b);
    const error = (await accept(b).catch((e: unknown) => e)) as HttpError;
    expect(error).toBeInstanceOf(HttpError);
    expect(error.code).toBe("rate_limited");
    const response = error.toResponse();
    expect(response.status).toBe(429);
    const retryAfter = Number(response.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(3590);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body["retry_after_seconds"]).toBe(retryAfter);
    const next = Date.parse(String(body["next_allowed_at"]));
    const now = (await databaseNow(db.sql)).getTime();
    expect(next - now).toBeGreaterThan(3590_000);
    expect(next - now).toBeLessThanOrEqual(3600_000);
    // An author's own code for the same refusal.
    const own = await db.sql
      .begin((tx) =>
        acceptWithinLimit(tx, {
          bucket: b,
          key: "5Hotkey",
          limit: 1,
          windowSeconds: 3600,
          code: "submission_rate_limited",
        }),
      )
      .catch((e: unknown) => e);
    expect(own).toMatchObject({ status: 429, code: "submission_rate_limited" });
  });

  it("slides by the database's clock, whatever the process's clock says", async () => {
    const b = bucket();
    // Hits placed by the database's clock: one just out of the 60 s window, one 30 s in.
    await db.sql`insert into sdk_rate_limits (bucket, hotkey, hits, window_seconds)
      values (${b}, '5Hotkey', array[now() - interval '61 seconds', now() - interval '30 seconds'], 60)`;
    const take = () =>
      db.sql.begin((tx) =>
        acceptWithinLimit(tx, { bucket: b, key: "5Hotkey", limit: 1, windowSeconds: 60 }),
      );
    // On PostgreSQL this process's clock runs a day ahead (a skewed replica): it changes nothing.
    // PGlite runs inside this process and reads its clock, so there the skew cannot exist.
    if (backend === "postgres") {
      vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 86_400_000 });
    }
    const refused = (await take().catch((e: unknown) => e)) as HttpError;
    vi.useRealTimers();
    expect(refused).toMatchObject({ status: 429 });
    const next = Date.parse(String(refused.extra["next_allowed_at"]));
    const now = (await databaseNow(db.sql)).getTime();
    // The 30 s old hit leaves the window 30 s from the database's now.
    expect(next - now).toBeGreaterThan(28_000);
    expect(next - now).toBeLessThanOrEqual(30_000);
    // Once that hit is out of the window (moved back by the database's clock), one more fits.
    await db.sql`update sdk_rate_limits set hits = array[now() - interval '61 seconds']
      where bucket = ${b}`;
    await expect(take()).resolves.toBeUndefined();
    await expect(take()).rejects.toMatchObject({ status: 429 });
  });

  it("refuses an unusable limit before touching the database", async () => {
    await expect(
      db.sql.begin((tx) =>
        acceptWithinLimit(tx, { bucket: bucket(), key: "k", limit: 0, windowSeconds: 60 }),
      ),
    ).rejects.toThrow(RangeError);
  });
});
