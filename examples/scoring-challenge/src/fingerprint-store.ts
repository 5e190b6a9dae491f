/**
 * Duplicate checks against earlier bundles: the same ZIP (code_hash), or a near-duplicate by
 * token shingles. Earlier means a smaller submission id, so when two copies race the first
 * committed wins, as on the leaderboard. Bundles that were rejected or failed do not count:
 * a miner fixing a refused bundle, or resubmitting a broken one, is not copying anyone.
 * A hotkey's own earlier bundles do count (as in production): resubmitting a near-identical
 * bundle to draw another seed is what the check is for.
 *
 * Stored fingerprints carry their FINGERPRINT_VERSION, and only equal versions compare (shingles
 * of different code are not comparable). A row of an older version is recomputed from its
 * submission's stored ZIP before any check that could match it, so a bundle accepted before an
 * upgrade of the fingerprint still protects its author afterwards.
 */
import type { Sql, TransactionSql } from "@platform/challenge-sdk";
import { readBundleZip } from "./bundle/index.js";
import {
  estimatedJaccard,
  FINGERPRINT_VERSION,
  type Fingerprint,
  fingerprint as fingerprintFiles,
  isNearDuplicate,
  jaccard,
  MINHASH_SIZE,
  NEAR_DUPLICATE_THRESHOLD,
} from "./near-duplicate.js";

/** An earlier bundle this one copies. */
export interface DuplicateMatch {
  kind: "exact" | "near";
  submissionId: string;
  /** Jaccard similarity of the shingle sets (1 for an exact copy). */
  similarity: number;
}

/** What to look for, and before which submission. */
export interface DuplicateQuery {
  codeHash: string;
  fingerprint: Fingerprint;
  /** Only submissions with a smaller id count (the bundle's own id); all of them when absent. */
  before?: string | number | bigint;
  threshold?: number;
}

// The MinHash estimate only picks which candidates are worth an exact comparison; its spread at
// 128 functions is about ±0.04, so this margin never drops a true match.
const ESTIMATE_MARGIN = 0.2;
// Candidates are read in id order; past this many the earliest ones decide.
const MAX_CANDIDATES = 1000;
// Stale fingerprints recomputed per round trip: each reads a ZIP of up to 6 MiB.
const UPGRADE_BATCH = 20;

/**
 * Store `fingerprint` for `submissionId`: once per version (a second call with the same version
 * changes nothing; a newer version replaces an older row).
 */
export async function saveFingerprint(
  sql: Sql | TransactionSql,
  submissionId: string | number | bigint,
  fingerprint: Fingerprint,
): Promise<void> {
  await sql`
    insert into bundle_fingerprints (submission_id, version, shingle_count, shingles, minhash, bands)
    values (${String(submissionId)}, ${fingerprint.version}, ${fingerprint.shingles.length},
            ${toBytes(fingerprint.shingles)}, ${toBytes(fingerprint.minhash)},
            ${sql.array(fingerprint.bands, 23)})
    on conflict (submission_id) do update set
      version = excluded.version, shingle_count = excluded.shingle_count,
      shingles = excluded.shingles, minhash = excluded.minhash, bands = excluded.bands
    where bundle_fingerprints.version < excluded.version`;
}

/**
 * Recompute, from the stored ZIP, every fingerprint older than FINGERPRINT_VERSION that a check
 * for a submission before `before` (all when null) could match: those of submissions not
 * rejected or failed. Returns how many rows it rewrote. Workers racing on the same rows write
 * the same values (the fingerprint is deterministic), so no lock is needed. A ZIP that no longer
 * opens (it opened when accepted) keeps its old row: never compared, as before this pass.
 */
export async function upgradeFingerprints(sql: Sql, before: string | null = null): Promise<number> {
  const unreadable: string[] = [];
  let upgraded = 0;
  for (;;) {
    const stale = await sql<{ id: string; bundle: Buffer }[]>`
      select f.submission_id::text as id, s.bundle
      from bundle_fingerprints f join submissions s on s.id = f.submission_id
      where f.version < ${FINGERPRINT_VERSION}
        and s.status not in ('rejected', 'failed')
        and (${before}::bigint is null or f.submission_id < ${before}::bigint)
        and f.submission_id <> all(${sql.array(unreadable, 20)}::bigint[])
      order by f.submission_id
      limit ${UPGRADE_BATCH}`;
    if (stale.length === 0) return upgraded;
    for (const row of stale) {
      const files = await readBundleZip(row.bundle);
      if (!files.ok) {
        unreadable.push(row.id);
        continue;
      }
      await saveFingerprint(sql, row.id, fingerprintFiles(files.value));
      upgraded++;
    }
  }
}

/** The earliest earlier bundle this one duplicates, exactly or nearly, or null. */
export async function findDuplicate(
  sql: Sql,
  query: DuplicateQuery,
): Promise<DuplicateMatch | null> {
  const before = query.before === undefined ? null : String(query.before);
  const threshold = query.threshold ?? NEAR_DUPLICATE_THRESHOLD;
  const [exact] = await sql<{ id: string }[]>`
    select id::text as id from submissions
    where code_hash = ${query.codeHash}
      and status not in ('rejected', 'failed')
      and (${before}::bigint is null or id < ${before}::bigint)
    order by id limit 1`;
  if (exact) return { kind: "exact", submissionId: exact.id, similarity: 1 };

  await upgradeFingerprints(sql, before);
  const { fingerprint } = query;
  const candidates = await sql<{ id: string; minhash: Buffer }[]>`
    select f.submission_id::text as id, f.minhash
    from bundle_fingerprints f join submissions s on s.id = f.submission_id
    where f.version = ${FINGERPRINT_VERSION}
      and f.bands && ${sql.array(fingerprint.bands, 23)}
      and s.status not in ('rejected', 'failed')
      and (${before}::bigint is null or f.submission_id < ${before}::bigint)
    order by f.submission_id
    limit ${MAX_CANDIDATES}`;
  const promising = candidates
    .filter(
      (row) =>
        estimatedJaccard(fromBytes(row.minhash, MINHASH_SIZE), fingerprint.minhash) >=
        threshold - ESTIMATE_MARGIN,
    )
    .map((row) => row.id);
  if (promising.length === 0) return null;

  const stored = await sql<{ id: string; shingles: Buffer }[]>`
    select submission_id::text as id, shingles from bundle_fingerprints
    where submission_id in ${sql(promising)}
    order by submission_id`;
  for (const row of stored) {
    const similarity = jaccard(fromBytes(row.shingles), fingerprint.shingles);
    if (isNearDuplicate(similarity, threshold)) {
      return { kind: "near", submissionId: row.id, similarity };
    }
  }
  return null;
}

/** The sentence a rejected duplicate's `error` carries. */
export function duplicateMessage(match: DuplicateMatch): string {
  return match.kind === "exact"
    ? `duplicate: this bundle is byte-for-byte submission ${match.submissionId}`
    : `duplicate: this bundle is a near-copy of submission ${match.submissionId} ` +
        `(token-shingle similarity ${match.similarity.toFixed(2)}, limit ${NEAR_DUPLICATE_THRESHOLD})`;
}

function toBytes(values: Uint32Array): Buffer {
  const bytes = Buffer.alloc(values.length * 4);
  for (let i = 0; i < values.length; i++) bytes.writeUInt32LE(values[i]!, i * 4);
  return bytes;
}

function fromBytes(bytes: Buffer, expected?: number): Uint32Array {
  const count = Math.floor(bytes.length / 4);
  const values = new Uint32Array(expected ?? count);
  for (let i = 0; i < Math.min(count, values.length); i++) values[i] = bytes.readUInt32LE(i * 4);
  return values;
}
