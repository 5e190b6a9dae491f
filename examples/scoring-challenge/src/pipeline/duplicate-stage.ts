/**
 * Duplicates: the same ZIP as an earlier bundle, or a near-copy of one by token shingles (see
 * near-duplicate.ts and fingerprint-store.ts for what counts as earlier). The fingerprint is
 * stored first (once), so a later bundle compares against this one whatever happens to it next.
 */
import type { Sql } from "@platform/challenge-sdk";
import type { Bundle } from "../bundle/index.js";
import { type DuplicateMatch, findDuplicate, saveFingerprint } from "../fingerprint-store.js";
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
