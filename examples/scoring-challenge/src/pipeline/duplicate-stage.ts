/**
 * Duplicates: the same ZIP as an earlier bundle, or a near-copy of one by token shingles (see
 * near-duplicate.ts and fingerprint-store.ts for what counts as earlier). The fingerprint is
 * stored first (once), so a later bundle compares against this one whatever happens to it next.
 *
 * The check runs after the static gate, so a near-copy that also breaks the gate is refused for
 * what it breaks (issue 31). One case skips the gate's container run: the same bytes as an
 * earlier bundle that counts and whose gate passed. The gate reads only the bytes, so it would
 * pass these too: no finding can be lost by answering "duplicate" at once.
 */
import type { Sql } from "@platform/challenge-sdk";
import type { Bundle } from "../bundle/index.js";
import { type DuplicateMatch, findDuplicate, saveFingerprint } from "../fingerprint-store.js";
import type { GateReport } from "../harness-report.js";
import { fingerprint } from "../near-duplicate.js";

/** The earlier bundle submission `id` duplicates, or null. */
export async function duplicateStage(
  sql: Sql,
  id: string,
  bundle: Bundle,
): Promise<DuplicateMatch | null> {
  const print = fingerprint(bundle.files);
  await saveFingerprint(sql, id, print);
  return findDuplicate(sql, { codeHash: bundle.codeHash, fingerprint: print, before: id });
}

/**
 * The earliest earlier bundle with exactly these bytes (`codeHash`) that counts (not rejected or
 * failed) and passed the static gate (its audit says so), or null: then the gate must run.
 */
export async function gatedExactDuplicate(
  sql: Sql,
  id: string,
  codeHash: string,
): Promise<DuplicateMatch | null> {
  const [row] = await sql<{ id: string; static: GateReport | null }[]>`
    select id::text as id, gate -> 'static' as static from submissions
    where code_hash = ${codeHash}
      and status not in ('rejected', 'failed')
      and id < ${id}::bigint
    order by id limit 1`;
  const passed = row?.static?.ok === true && row.static.violations.length === 0;
  return passed ? { kind: "exact", submissionId: row.id, similarity: 1 } : null;
}
