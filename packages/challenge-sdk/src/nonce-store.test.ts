import { type Database, newNonce } from "@platform/core";
import { createTestDatabase, testBackends } from "@platform/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateSdk } from "./_sdk-migrations.js";
import { pruneNonces, reserveNonce } from "./nonce-store.js";

describe.each(await testBackends())("the nonce store on %s", (backend) => {
  let db: Database;
  beforeAll(async () => {
    db = await createTestDatabase({ backend });
    await migrateSdk(db.sql);
  });
  afterAll(() => db?.close());

  it("reserves a (hotkey, nonce) once", async () => {
    const nonce = newNonce();
    expect(await reserveNonce(db.sql, "hk-a", nonce)).toBe(true);
    expect(await reserveNonce(db.sql, "hk-a", nonce)).toBe(false);
    // The same nonce is another key's own.
    expect(await reserveNonce(db.sql, "hk-b", nonce)).toBe(true);
  });

  it("lets exactly one of many concurrent reservations win", async () => {
    const nonce = newNonce();
    const results = await Promise.all(
      Array.from({ length: 25 }, () => reserveNonce(db.sql, "hk-race", nonce)),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it("works inside a transaction, and a rollback gives the nonce back", async () => {
    const nonce = newNonce();
    await expect(
      db.sql.begin(async (tx) => {
        expect(await reserveNonce(tx, "hk-tx", nonce)).toBe(true);
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(await reserveNonce(db.sql, "hk-tx", nonce)).toBe(true);
  });

  it("prunes only rows older than the retention", async () => {
    const old = newNonce();
    const recent = newNonce();
    await db.sql`insert into sdk_nonces (hotkey, nonce, created_at) values
      ('hk-prune', ${old}, now() - interval '24 hours 1 second'),
      ('hk-prune', ${recent}, now() - interval '23 hours 59 minutes')`;
    expect(await pruneNonces(db.sql)).toBeGreaterThanOrEqual(1);
    const left = await db.sql<
      { nonce: string }[]
    >`select nonce from sdk_nonces where hotkey = 'hk-prune'`;
    expect(left.map((r) => r.nonce)).toEqual([recent]);
    // Once pruned, a nonce could be stored again; its request is long outside the 300 s window.
    expect(await pruneNonces(db.sql, 60 * 60 * 24 * 2)).toBe(0);
  });
});
