import { readFileSync } from "node:fs";
import type { Sql } from "@platform/challenge-sdk";
import { testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { insertSubmission, scoringDatabase } from "../test/scoring-database.js";
import { duplicateMessage, findDuplicate, saveFingerprint } from "./fingerprint-store.js";
import { fingerprint } from "./near-duplicate.js";

const fixture = (name: string) =>
  readFileSync(new URL(`../test/fixtures/similarity/${name}`, import.meta.url), "utf8");
const files = (architecture: string, training = "training_a.py") => [
  { path: "architecture.py", text: fixture(architecture) },
  { path: "training.py", text: fixture(training) },
];
const hash = (n: number) => n.toString(16).padStart(64, "0");

describe.each(await testBackends())("duplicate checks on %s", (backend) => {
  let db: Awaited<ReturnType<typeof scoringDatabase>>;
  let sql: Sql;
  beforeAll(async () => {
    db = await scoringDatabase(backend);
    sql = db.sql;
  });
  afterAll(() => db?.close());
  beforeEach(async () => {
    await sql`delete from submissions`;
  });

  async function submitted(
    architecture: string,
    code: number,
    status = "completed",
    hotkey = "5A",
  ) {
    const id = await insertSubmission(sql, { status, codeHash: hash(code), hotkey });
    await saveFingerprint(sql, id, fingerprint(files(architecture)));
    return id;
  }

  it("finds an exact copy by code_hash and a disguised one by shingles, earliest first", async () => {
    const original = await submitted("transformer.py", 1);
    await submitted("conv.py", 2);
    const exact = await findDuplicate(sql, {
      codeHash: hash(1),
      fingerprint: fingerprint(files("gru.py")),
    });
    expect(exact).toEqual({ kind: "exact", submissionId: original, similarity: 1 });

    const near = await findDuplicate(sql, {
      codeHash: hash(99),
      fingerprint: fingerprint(files("transformer_disguised.py")),
    });
    expect(near).toMatchObject({ kind: "near", submissionId: original });
    expect(near!.similarity).toBeGreaterThanOrEqual(0.85);
    expect(duplicateMessage(near!)).toMatch(
      new RegExp(
        `^duplicate: this bundle is a near-copy of submission ${original} \\(token-shingle similarity 0\\.9\\d, limit 0\\.85\\)$`,
      ),
    );
    expect(
      await findDuplicate(sql, { codeHash: hash(99), fingerprint: fingerprint(files("gru.py")) }),
    ).toBeNull();
  });

  it("compares only with earlier submissions that were not rejected or failed", async () => {
    const refused = await submitted("transformer.py", 1, "rejected");
    await submitted("transformer.py", 2, "failed");
    const mine = await submitted("transformer_disguised.py", 3, "pending");
    const probe = { codeHash: hash(1), fingerprint: fingerprint(files("transformer.py")) };
    // Its own row (and later ones) never count: `before` is the bundle's own id.
    expect(await findDuplicate(sql, { ...probe, before: mine })).toBeNull();
    expect(await findDuplicate(sql, { ...probe, before: Number(mine) + 1 })).toMatchObject({
      kind: "near",
      submissionId: mine,
    });
    // Held and running bundles count: they may still be scored.
    await sql`update submissions set status = 'held', held_at = now() where id = ${refused}`;
    expect(await findDuplicate(sql, probe)).toMatchObject({ kind: "exact", submissionId: refused });
  });

  it("counts the same hotkey's earlier bundles too", async () => {
    const first = await submitted("gru.py", 5, "completed", "5Self");
    const again = await findDuplicate(sql, {
      codeHash: hash(6),
      fingerprint: fingerprint(files("gru.py")),
    });
    expect(again).toMatchObject({ kind: "near", submissionId: first, similarity: 1 });
  });

  it("stores a fingerprint once and drops it with its submission", async () => {
    const id = await submitted("conv.py", 7);
    await saveFingerprint(sql, id, fingerprint(files("gru.py")));
    const [row] = await sql<{ n: number; count: number }[]>`
      select count(*)::int as n, max(shingle_count) as count from bundle_fingerprints`;
    expect(row).toEqual({ n: 1, count: fingerprint(files("conv.py")).shingles.length });
    await sql`delete from submissions where id = ${id}`;
    expect((await sql`select 1 from bundle_fingerprints`).length).toBe(0);
  });
});
