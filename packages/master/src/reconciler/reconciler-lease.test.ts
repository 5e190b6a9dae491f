// The reconciler's lease on a real database: of two holders exactly one holds it; the other
// takes it once the holder releases it or stops renewing (expiry, by the database's clock).
import { setTimeout as sleep } from "node:timers/promises";
import { migrate } from "@platform/core";
import { createTestDatabase, testBackends } from "@platform/core/testing";
import { describe, expect, it } from "vitest";
import { masterMigrations } from "../migrations.js";
import { ReconcilerLease } from "./reconciler-lease.js";

describe.each(await testBackends())("the reconciler lease on %s", (backend) => {
  const withDatabase = async (run: (sql: Parameters<typeof migrate>[0]) => Promise<void>) => {
    const db = await createTestDatabase({ backend });
    try {
      await migrate(db.sql, { namespace: "master", migrations: await masterMigrations() });
      await run(db.sql);
    } finally {
      await db.close();
    }
  };

  it("is held by one holder at a time, renewed by it, and taken over once released", async () => {
    await withDatabase(async (sql) => {
      const a = new ReconcilerLease(sql, "a", 30);
      const b = new ReconcilerLease(sql, "b", 30);
      const both = await Promise.all([a.acquire(), b.acquire()]);
      expect(both.filter(Boolean)).toHaveLength(1);
      const [holder, other] = both[0] ? [a, b] : [b, a];
      const first = await holder.read();
      expect(await holder.acquire()).toBe(true);
      expect(await other.acquire()).toBe(false);
      const renewed = await holder.read();
      expect(renewed).toMatchObject({ holder: holder.holder, live: true });
      expect(renewed!.expires_at.getTime()).toBeGreaterThanOrEqual(first!.expires_at.getTime());
      expect(renewed!.acquired_at).toEqual(first!.acquired_at);
      // Only the holder records a pass or releases.
      await other.recordPass("not mine");
      await other.release();
      expect(await holder.read()).toMatchObject({ holder: holder.holder, last_error: null });
      await holder.recordPass("the Docker engine is unreachable");
      expect((await other.read())?.last_error).toBe("the Docker engine is unreachable");
      await holder.release();
      expect(await other.read()).toBeNull();
      expect(await other.acquire()).toBe(true);
      expect(await other.read()).toMatchObject({ holder: other.holder, last_error: null });
      expect(await holder.acquire()).toBe(false);
    });
  });

  it("expires when its holder stops renewing: another takes it, and the old holder has lost it", async () => {
    await withDatabase(async (sql) => {
      const stale = new ReconcilerLease(sql, "stale", 1);
      const next = new ReconcilerLease(sql, "next", 30);
      expect(await stale.acquire()).toBe(true);
      expect(await next.acquire()).toBe(false);
      await sleep(1_200);
      expect((await next.read())?.live).toBe(false);
      expect(await next.acquire()).toBe(true);
      expect(await stale.acquire()).toBe(false);
      expect((await stale.read())?.holder).toBe("next");
    });
  });
});
