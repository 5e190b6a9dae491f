import { createLogger, type Database, migrate } from "@platform/core";
import { createTestDatabase, testBackends } from "@platform/core/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { masterMigrations } from "../migrations.js";
import { NonceStore } from "./nonce-store.js";

const log = createLogger({ name: "nonce-store-test", level: "silent" });

describe.each(await testBackends())("NonceStore on %s", (backend) => {
  let db: Database;
  beforeAll(async () => {
    db = await createTestDatabase({ backend });
    await migrate(db.sql, { namespace: "master", migrations: await masterMigrations() });
  });
  afterAll(() => db.close());
  beforeEach(async () => {
    await db.sql`delete from submission_nonces`;
  });

  const age = async (hours: number, hotkey: string, nonce: string) => {
    await db.sql`insert into submission_nonces (hotkey, nonce, created_at)
      values (${hotkey}, ${nonce}, now() - make_interval(hours => ${hours}))`;
  };
  const count = async () =>
    Number((await db.sql`select count(*)::int as n from submission_nonces`)[0]!.n);

  it("reserves a (hotkey, nonce) pair once", async () => {
    const store = new NonceStore(db.sql, { log });
    expect(await store.reserve("5Alice", "nonce-aaaaaaaaaaaaaaaa")).toBe(true);
    expect(await store.reserve("5Alice", "nonce-aaaaaaaaaaaaaaaa")).toBe(false);
    expect(await store.reserve("5Bob", "nonce-aaaaaaaaaaaaaaaa")).toBe(true);
    expect(await store.reserve("5Alice", "nonce-bbbbbbbbbbbbbbbb")).toBe(true);
    expect(await count()).toBe(3);
  });

  it("gives exactly one of many concurrent reservations the pair", async () => {
    const store = new NonceStore(db.sql, { log });
    const results = await Promise.all(
      Array.from({ length: 30 }, () => store.reserve("5Race", "nonce-race-0123456789")),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await count()).toBe(1);
  });

  it("prunes only rows older than the retention", async () => {
    await age(25, "5Old", "nonce-old-0123456789ab");
    await age(23, "5Recent", "nonce-recent-0123456789");
    const store = new NonceStore(db.sql, { log });
    expect(await store.prune()).toBe(1);
    const rows = await db.sql`select hotkey from submission_nonces`;
    expect(rows.map((row) => row.hotkey)).toEqual(["5Recent"]);
    // Once pruned, an old nonce could be reserved again: harmless, its signature expired long ago.
    expect(await store.reserve("5Old", "nonce-old-0123456789ab")).toBe(true);
  });

  it("prunes opportunistically after a reservation once the interval has passed", async () => {
    await age(30, "5Old", "nonce-old-0123456789ab");
    const store = new NonceStore(db.sql, { log, pruneEveryMs: 0 });
    await store.reserve("5New", "nonce-new-0123456789ab");
    await store.stop(); // waits for the prune the reservation started
    const rows = await db.sql`select hotkey from submission_nonces`;
    expect(rows.map((row) => row.hotkey)).toEqual(["5New"]);
  });

  it("prunes on start and stops cleanly", async () => {
    await age(48, "5Old", "nonce-old-0123456789ab");
    const store = new NonceStore(db.sql, { log, retentionMs: 60 * 60 * 1000 });
    store.start();
    await store.stop();
    expect(await count()).toBe(0);
    expect(await store.prune()).toBe(0); // stopped: no more queries
  });
});
