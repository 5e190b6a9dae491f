import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testBackends } from "../testing/test-backends.js";
import { createTestDatabase } from "../testing/test-database.js";
import { groupCommit } from "./group-commit.js";
import type { Database } from "./open-database.js";
import { type NoncePair, spendNonces } from "./spend-nonces.js";

describe.each(await testBackends())("spendNonces on %s", (backend) => {
  let db: Database;
  const table = `spend_nonces_${process.pid}`;
  beforeAll(async () => {
    db = await createTestDatabase({ backend });
    await db.sql.unsafe(
      `create table ${table} (hotkey text not null, nonce text not null,
        created_at timestamptz not null default now(), primary key (hotkey, nonce))`,
    );
  });
  afterAll(() => db?.close());

  it("takes each new pair once, refuses spent ones and repeats within the list", async () => {
    expect(await spendNonces(db.sql, table, [{ hotkey: "5A", nonce: "n1" }])).toEqual([true]);
    const taken = await spendNonces(db.sql, table, [
      { hotkey: "5A", nonce: "n1" }, // spent above
      { hotkey: "5A", nonce: "n2" },
      { hotkey: "5B", nonce: "n1" }, // same nonce, other hotkey: its own pair
      { hotkey: "5A", nonce: "n2" }, // a repeat in the same list: the first one wins
    ]);
    expect(taken).toEqual([false, true, true, false]);
    const rows = await db.sql`select hotkey, nonce from ${db.sql(table)} order by hotkey, nonce`;
    expect(rows.map((r) => `${r.hotkey}/${r.nonce}`)).toEqual(["5A/n1", "5A/n2", "5B/n1"]);
    expect(await spendNonces(db.sql, table, [])).toEqual([]);
  });

  it("keeps values that look like SQL or hold quotes exactly as sent", async () => {
    const odd = { hotkey: "5C'); drop table x; --", nonce: 'n"{},\\' };
    expect(await spendNonces(db.sql, table, [odd])).toEqual([true]);
    expect(await spendNonces(db.sql, table, [odd])).toEqual([false]);
  });

  it("gives exactly one winner per pair when many replicas race through groupCommit", async () => {
    // Two writers on the same database, as two masters would be: every pair sent to both.
    const a = groupCommit((pairs: readonly NoncePair[]) => spendNonces(db.sql, table, pairs));
    const b = groupCommit((pairs: readonly NoncePair[]) => spendNonces(db.sql, table, pairs));
    const pairs = Array.from({ length: 200 }, (_, i) => ({ hotkey: "5Race", nonce: `r${i}` }));
    // One writer sees them in reverse, so its batches list the same pairs in the other order (two
    // unsorted multi-row inserts could then deadlock on PostgreSQL; spendNonces sorts).
    const fromA = pairs.map((pair) => a(pair));
    const fromB = [...pairs]
      .reverse()
      .map((pair) => b(pair))
      .reverse();
    const results = (await Promise.all([...fromA, ...fromB])).flatMap((_, i, all) =>
      i < pairs.length ? [all[i], all[i + pairs.length]] : [],
    );
    for (let i = 0; i < pairs.length; i++) {
      expect([results[2 * i], results[2 * i + 1]].filter(Boolean)).toHaveLength(1);
    }
  });
});
