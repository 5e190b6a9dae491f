import type { Database } from "@platform/core";
import { createTestDatabase, testBackends } from "@platform/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateSdk } from "./_sdk-migrations.js";
import { pruneRateLimits, releaseRateLimit, takeRateLimit } from "./rate-limit.js";

let counter = 0;
const bucket = () => `bucket-${process.pid}-${++counter}`;

describe.each(await testBackends())("rate limits on %s", (backend) => {
  let db: Database;
  beforeAll(async () => {
    db = await createTestDatabase({ backend });
    await migrateSdk(db.sql);
  });
  afterAll(() => db?.close());

  it("allows `limit` requests per window per key, then says how long to wait", async () => {
    const b = bucket();
    const take = (key: string) =>
      takeRateLimit(db.sql, { bucket: b, key, limit: 2, windowSeconds: 3600 });
    expect((await take("a")).ok).toBe(true);
    expect((await take("a")).ok).toBe(true);
    const refused = await take("a");
    expect(refused).toEqual({
      ok: false,
      retryAfterSeconds: expect.any(Number),
      nextAllowedAt: expect.any(Date),
    });
    if (!refused.ok) {
      expect(refused.retryAfterSeconds).toBeGreaterThan(3500);
      expect(refused.retryAfterSeconds).toBeLessThanOrEqual(3600);
    }
    expect((await take("b")).ok).toBe(true);
  });

  it("slides: hits older than the window stop counting", async () => {
    const b = bucket();
    await db.sql`insert into sdk_rate_limits (bucket, hotkey, hits, window_seconds)
      values (${b}, 'k', array[now() - interval '61 seconds', now() - interval '30 seconds'], 60)`;
    const first = await takeRateLimit(db.sql, { bucket: b, key: "k", limit: 2, windowSeconds: 60 });
    expect(first.ok).toBe(true);
    const second = await takeRateLimit(db.sql, {
      bucket: b,
      key: "k",
      limit: 2,
      windowSeconds: 60,
    });
    expect(second).toMatchObject({ ok: false });
    // The oldest live hit is 30 s old: it leaves the window in about 30 s.
    if (!second.ok) expect(second.retryAfterSeconds).toBeGreaterThanOrEqual(29);
    if (!second.ok) expect(second.retryAfterSeconds).toBeLessThanOrEqual(31);
    const [row] = await db.sql<
      { n: number }[]
    >`select cardinality(hits) as n from sdk_rate_limits where bucket = ${b}`;
    expect(row?.n).toBe(2);
  });

  it("is atomic under concurrency: exactly `limit` of many parallel takes succeed", async () => {
    const b = bucket();
    const results = await Promise.all(
      Array.from({ length: 30 }, () =>
        takeRateLimit(db.sql, { bucket: b, key: "k", limit: 5, windowSeconds: 60 }),
      ),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(5);
  });

  it("gives a released slot back, exactly one of equal slots", async () => {
    const b = bucket();
    const rule = { bucket: b, key: "k", limit: 1, windowSeconds: 60 };
    const slot = await takeRateLimit(db.sql, rule);
    if (!slot.ok) throw new Error("expected a slot");
    expect((await takeRateLimit(db.sql, rule)).ok).toBe(false);
    await releaseRateLimit(db.sql, { bucket: b, key: "k", slot: slot.slot });
    expect((await takeRateLimit(db.sql, rule)).ok).toBe(true);

    // Two hits of the same instant: releasing one keeps the other.
    const twin = bucket();
    await db.sql`insert into sdk_rate_limits (bucket, hotkey, hits, window_seconds)
      values (${twin}, 'k', array[now(), now()], 60)`;
    const [row] = await db.sql<
      { t: string }[]
    >`select hits[1]::text as t from sdk_rate_limits where bucket = ${twin}`;
    await releaseRateLimit(db.sql, { bucket: twin, key: "k", slot: row!.t });
    const [after] = await db.sql<
      { n: number }[]
    >`select cardinality(hits) as n from sdk_rate_limits where bucket = ${twin}`;
    expect(after?.n).toBe(1);
  });

  it("refuses unusable rules", async () => {
    await expect(
      takeRateLimit(db.sql, { bucket: "x", key: "k", limit: 0, windowSeconds: 1 }),
    ).rejects.toThrow(RangeError);
    await expect(
      takeRateLimit(db.sql, { bucket: "x", key: "k", limit: 1.5, windowSeconds: 1 }),
    ).rejects.toThrow(RangeError);
    await expect(
      takeRateLimit(db.sql, { bucket: "x", key: "k", limit: 1, windowSeconds: Number.NaN }),
    ).rejects.toThrow(RangeError);
  });

  it("prunes rows whose hits have all expired", async () => {
    const b = bucket();
    await db.sql`insert into sdk_rate_limits (bucket, hotkey, hits, window_seconds, updated_at) values
      (${b}, 'gone', array[now() - interval '2 hours'], 3600, now() - interval '2 hours'),
      (${b}, 'kept', array[now() - interval '30 minutes'], 3600, now() - interval '30 minutes')`;
    await pruneRateLimits(db.sql);
    const left = await db.sql<
      { hotkey: string }[]
    >`select hotkey from sdk_rate_limits where bucket = ${b}`;
    expect(left.map((r) => r.hotkey)).toEqual(["kept"]);
  });
});
