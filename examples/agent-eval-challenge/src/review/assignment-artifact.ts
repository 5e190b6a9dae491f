/**
 * The artifact the review VM reviews (rule 17): the exact stored ZIP bytes, hashed again before
 * they leave, so storage corruption or a wrong join is a loud 500, never the wrong bytes served
 * under a good digest.
 */
import { HttpError, type Logger, type Sql } from "@platform/challenge-sdk";
import { sha256Hex } from "../crypto/index.js";
import { VM_ERROR_CODES } from "./vm-errors.js";

/** A stored artifact as read: its bytes and the sha256 recorded for it. */
export interface StoredArtifact {
  submissionId: string;
  bytes: Uint8Array;
  /** What the assignment core promises the VM (the submission's recorded sha256). */
  expectedSha256: string;
}

/**
 * The bytes of `artifact` if they hash to `expectedSha256`; else an error log and a 500
 * artifact_integrity_failure (the bytes are never returned).
 */
export function verifiedArtifactBytes(artifact: StoredArtifact, log: Logger): Uint8Array {
  const actual = sha256Hex(artifact.bytes);
  if (actual !== artifact.expectedSha256) {
    log.error("review artifact failed its integrity check: not served", {
      submission_id: artifact.submissionId,
      expected_sha256: artifact.expectedSha256,
      actual_sha256: actual,
    });
    throw new HttpError(
      500,
      VM_ERROR_CODES.artifactIntegrityFailure,
      "The stored artifact does not match its recorded sha256; it is not served.",
    );
  }
  return artifact.bytes;
}

/**
 * The stored ZIP of a submission as its holder serves it: an assignment (re-hashed against its
 * core's artifact_sha256) or an eval run (against its plan's agent_sha256).
 */
export async function artifactResponse(
  sql: Sql,
  artifact: { submissionId: string; expectedSha256: string; holder: string },
  log: Logger,
): Promise<Response> {
  const [row] = await sql<{ artifact: Uint8Array }[]>`
    select artifact from submissions where id = ${artifact.submissionId}`;
  // The holder references its submission (foreign key): a missing row is a broken database.
  if (!row) throw new Error(`submission ${artifact.submissionId} of ${artifact.holder} is missing`);
  const bytes = verifiedArtifactBytes({ ...artifact, bytes: row.artifact }, log);
  // A copy over a plain ArrayBuffer (what Response takes); at most 1 MiB.
  return new Response(new Uint8Array(bytes), {
    status: 200,
    headers: {
      "content-type": "application/zip",
      "content-length": String(bytes.byteLength),
      "x-artifact-sha256": artifact.expectedSha256,
      "cache-control": "no-store",
    },
  });
}
