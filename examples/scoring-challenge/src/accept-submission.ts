/**
 * Accepting a bundle, signed or through the master's bridge. The checks that are cheap and
 * structural answer at once with a 4xx and a stable code, so a miner learns about a bad upload
 * while it waits: the SDK checks the archive (BUNDLE_ARCHIVE: base64 400 `invalid_base64`, size
 * 413, the ZIP itself: no links, traversal, absolute names, special files; allowed extensions
 * only; at most 200 files and 256 KiB unpacked) before the handler; here, its files must be text
 * and hold `architecture.py` / `training.py` at its root. Everything that parses or
 * runs code (the contract's functions, the static gates, the LLM review, the scored run) is the
 * pipeline's, in a container, and ends as the submission's status instead.
 *
 * The row, its fingerprint (so bundles processed later compare against it at once) and its
 * queue job are written in one transaction: none exists without the others.
 */
import { createHash } from "node:crypto";
import { type CheckedArchive, HttpError, type Sql } from "@platform/challenge-sdk";
import type { JobQueue } from "@platform/challenge-sdk/jobs";
import type { SubmissionStatus } from "./api-schemas.js";
import { type Bundle, bundleFromArchive, MAX_BASE64_CHARS } from "./bundle/index.js";
import { saveFingerprint } from "./fingerprint-store.js";
import { fingerprint } from "./near-duplicate.js";
import {
  SCORE_MAX_ATTEMPTS,
  type ScoreJob,
  type ScoreResult,
} from "./pipeline/pipeline-context.js";
import { insertSubmission } from "./submission-store.js";

/** Largest `metadata`, serialised. */
export const MAX_METADATA_BYTES = 16 * 1024;
/**
 * The submit route's body cap: the largest base64 bundle plus room for the JSON around it. A
 * larger body is 413 before it is read to the end.
 */
export const SUBMISSION_BODY_LIMIT = MAX_BASE64_CHARS + 64 * 1024;

/** One submission as it arrived. */
export interface IncomingSubmission {
  hotkey: string;
  via: "signed" | "bridge";
  requestHash: string | null;
  filename: string;
  /** The ZIP the SDK read under BUNDLE_ARCHIVE (from base64 in JSON, or raw bytes). */
  archive: CheckedArchive;
  metadata: Record<string, unknown>;
}

/** What accepting needs from the instance. */
export interface AcceptDeps {
  sql: Sql;
  queue: JobQueue<ScoreJob, ScoreResult>;
  epochSeconds: number;
  llmGate: "required" | "off";
}

/** Check, store and enqueue a submission; its status record (pending), or an HttpError. */
export async function acceptSubmission(
  deps: AcceptDeps,
  incoming: IncomingSubmission,
): Promise<SubmissionStatus> {
  const metadataBytes = Buffer.byteLength(JSON.stringify(incoming.metadata));
  if (metadataBytes > MAX_METADATA_BYTES) {
    throw new HttpError(
      413,
      "metadata_too_large",
      `metadata is ${metadataBytes} bytes as JSON; the limit is ${MAX_METADATA_BYTES}`,
    );
  }
  const bundle = openArchive(incoming.archive);
  const { sql, queue } = deps;
  const print = fingerprint(bundle.files);
  const status = await sql.begin(async (tx) => {
    const row = await insertSubmission(tx, {
      hotkey: incoming.hotkey,
      via: incoming.via,
      requestHash: incoming.requestHash,
      filename: incoming.filename,
      codeHash: bundle.codeHash,
      zip: bundle.zip,
      metadata: incoming.metadata,
      llmGate: deps.llmGate,
      architectureHash: fileHash(bundle, "architecture.py"),
      trainingHash: fileHash(bundle, "training.py"),
      epochSeconds: deps.epochSeconds,
    });
    const job = await queue.enqueue(
      { submissionId: row.id },
      { key: `score:${row.id}`, maxAttempts: SCORE_MAX_ATTEMPTS, tx },
    );
    await tx`update submissions set job_id = ${job.id} where id = ${row.id}::bigint`;
    await saveFingerprint(tx, row.id, print);
    return row;
  });
  return status as SubmissionStatus;
}

/** The bundle of a checked archive, or the 4xx that refuses it. */
function openArchive(archive: CheckedArchive): Bundle {
  const opened = bundleFromArchive(archive);
  if (!opened.ok) {
    const { status, code, message } = opened.error;
    throw new HttpError(status, code, message);
  }
  return opened.value;
}

function fileHash(bundle: Bundle, path: string): string {
  const file = bundle.files.find((candidate) => candidate.path === path);
  return createHash("sha256")
    .update(file?.data ?? Buffer.alloc(0))
    .digest("hex");
}
