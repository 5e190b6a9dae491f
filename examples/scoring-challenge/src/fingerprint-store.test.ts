import { readFileSync } from "node:fs";
import type { Sql } from "@platform/challenge-sdk";
import { testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { insertSubmission, scoringDatabase } from "../test/scoring-database.js";
import { writeZip } from "../test/zip-writer.js";
import {
  duplicateMessage,
  findDuplicate,
  saveFingerprint,
  upgradeFingerprints,
} from "./fingerprint-store.js";
import {
  FINGERPRINT_VERSION,
  type Fingerprint,
  fingerprint,
  fingerprintOf,
  NEAR_DUPLICATE_THRESHOLD,
  type SourceFile,
  shingleHashes,
} from "./near-duplicate.js";
import { pythonTokens } from "./python-tokens.js";

const fixture = (name: string) =>
  readFileSync(new URL(`../test/fixtures/similarity/${name}`, import.meta.url), "utf8");
const files = (architecture: string, training = "training_a.py") => [
  { path: "architecture.py", text: fixture(architecture) },
  { path: "training.py", text: fixture(training) },
];
const hash = (n: number) => n.toString(16).padStart(64, "0");
const example = (name: string) =>
  ["architecture.py", "training.py"].map((path) => ({
    path,
    text: readFileSync(new URL(`../bundles/${name}/${path}`, import.meta.url), "utf8"),
  }));
// Functions nothing calls, different enough from each other to dilute a copy when counted.
const PADDING = Array.from(
  { length: 40 },
  (_, i) =>
    `def pad_${i}(a, b):\n${"    a = a + b\n".repeat(i % 5)}` +
    `    ${["if a < b:\n        return b", "for k in range(a):\n        b = b * k", "while a:\n        a -= 1"][i % 3]}\n` +
    `    return [a, b${", a".repeat(i % 7)}]\n`,
).join("\n\n");
/** A fingerprint as version 1 stored it: shingles of all the code, reachable or not. */
const versionOne = (files: readonly SourceFile[]): Fingerprint => ({
  ...fingerprintOf(files.flatMap((file) => shingleHashes(pythonTokens(file.text)))),
  version: 1,
});

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
        `^duplicate: this bundle is a near-copy of submission ${original} \\(token-shingle similarity (0\\.9\\d|1\\.00), limit 0\\.85\\)$`,
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

  it("finds a pair exactly at the threshold, and not one just below it", async () => {
    const id = await insertSubmission(sql, { status: "completed", codeHash: hash(20) });
    await saveFingerprint(sql, id, fingerprintOf(Array.from({ length: 20 }, (_, i) => i + 1)));
    // 17 shared shingles of 20 in all: Jaccard 0.85 exactly.
    const atThreshold = fingerprintOf(Array.from({ length: 17 }, (_, i) => i + 1));
    expect(await findDuplicate(sql, { codeHash: hash(21), fingerprint: atThreshold })).toEqual({
      kind: "near",
      submissionId: id,
      similarity: NEAR_DUPLICATE_THRESHOLD,
    });
    const below = fingerprintOf(Array.from({ length: 16 }, (_, i) => i + 1));
    expect(await findDuplicate(sql, { codeHash: hash(21), fingerprint: below })).toBeNull();
  });

  it("refuses a copy of an earlier bundle padded with a module and functions that never run", async () => {
    const original = await insertSubmission(sql, { status: "completed", codeHash: hash(30) });
    await saveFingerprint(sql, original, fingerprint(example("good")));
    const [architecture, training] = example("good");
    const copy = [
      { path: "architecture.py", text: `import helpers\n${architecture!.text}\n${PADDING}\n` },
      { path: "training.py", text: `${training!.text}\n${PADDING}\n` },
      { path: "helpers.py", text: PADDING },
    ];
    expect(
      await findDuplicate(sql, { codeHash: hash(31), fingerprint: versionOne(copy) }),
    ).toBeNull();
    const match = await findDuplicate(sql, { codeHash: hash(31), fingerprint: fingerprint(copy) });
    expect(match).toEqual({ kind: "near", submissionId: original, similarity: 1 });
  });

  it("recomputes an older version's fingerprint from its stored ZIP before comparing", async () => {
    // Accepted under version 1: good padded with dead code, stored with all of its shingles.
    const [architecture, training] = example("good");
    const padded = [
      { path: "architecture.py", text: `${architecture!.text}\n${PADDING}\n` },
      { path: "training.py", text: training!.text },
      { path: "helpers.py", text: PADDING },
    ];
    const old = await insertSubmission(sql, { status: "completed", codeHash: hash(40) });
    const zip = writeZip(padded.map(({ path, text }) => ({ name: path, data: text })));
    await sql`update submissions set bundle = ${zip} where id = ${old}`;
    await saveFingerprint(sql, old, versionOne(padded));
    // Rows that never count are left as they are: rejected ones, and one whose ZIP does not open.
    const rejected = await insertSubmission(sql, { status: "rejected", codeHash: hash(41) });
    await saveFingerprint(sql, rejected, versionOne(padded));
    const unreadable = await insertSubmission(sql, { status: "completed", codeHash: hash(42) });
    await saveFingerprint(sql, unreadable, versionOne(padded));

    // Good itself, later: a near-copy of the old bundle's code that can run.
    const match = await findDuplicate(sql, {
      codeHash: hash(43),
      fingerprint: fingerprint(example("good")),
    });
    expect(match).toEqual({ kind: "near", submissionId: old, similarity: 1 });
    const rows = await sql<{ id: string; version: number; shingle_count: number }[]>`
      select submission_id::text as id, version, shingle_count from bundle_fingerprints
      order by submission_id`;
    expect(rows).toEqual([
      { id: old, version: FINGERPRINT_VERSION, shingle_count: fingerprint(padded).shingles.length },
      { id: rejected, version: 1, shingle_count: versionOne(padded).shingles.length },
      { id: unreadable, version: 1, shingle_count: versionOne(padded).shingles.length },
    ]);
    // Nothing is left to upgrade, and a second pass rewrites nothing.
    expect(await upgradeFingerprints(sql)).toBe(0);
  });

  it("upgrades only rows a check could match: those before the bundle checked", async () => {
    const zip = writeZip(example("good").map(({ path, text }) => ({ name: path, data: text })));
    const first = await insertSubmission(sql, { status: "completed", codeHash: hash(50) });
    const second = await insertSubmission(sql, { status: "pending", codeHash: hash(51) });
    for (const id of [first, second]) {
      await sql`update submissions set bundle = ${zip} where id = ${id}`;
      await saveFingerprint(sql, id, versionOne(example("good")));
    }
    expect(await upgradeFingerprints(sql, second)).toBe(1);
    expect(await upgradeFingerprints(sql, second)).toBe(0);
    expect(await upgradeFingerprints(sql)).toBe(1);
    // A newer version replaces an older row; the same version again changes nothing.
    await saveFingerprint(sql, first, {
      ...fingerprintOf([1, 2, 3]),
      version: FINGERPRINT_VERSION,
    });
    const [row] = await sql<{ n: number }[]>`
      select shingle_count as n from bundle_fingerprints where submission_id = ${first}`;
    expect(row!.n).toBe(fingerprint(example("good")).shingles.length);
  });
});
