/**
 * "A verified allow" (rule 12), decided afresh on every eval/prepare, never from a cached status:
 * the review session's current assignment is allowed, its nonce consumed, its verification
 * verified, and its stored envelope re-verifies now (the core's digest, the assignment digest,
 * the report_data binding, the quote with the configured verifier, the event log and the
 * measurement) and is at most 24 h old. Read and verified outside the issuing transaction (a
 * verifier may be slow); the transaction then checks the same receipt is still the current one.
 */
import { HttpError, type Sql, type TransactionSql } from "@platform/challenge-sdk";
import type { QuoteVerifier } from "../attestation/index.js";
import { canonicalDigest } from "../crypto/index.js";
import type { ReviewAssignmentCore } from "../review/index.js";
import {
  type ReviewVerificationRecord,
  type StoredEnvelope,
  verifyQuote,
} from "../review/receive-report.js";
import { assignmentReportData } from "../review/review-envelope.js";
import { EVAL_ERROR_CODES } from "./eval-errors.js";

/** How old the allowing report may be when a run is issued. */
export const REVIEW_FRESHNESS_MS = 24 * 60 * 60 * 1000;

/** The allowing review a run is issued under. */
export interface VerifiedAllow {
  assignmentId: string;
  sessionId: string;
  reviewDigest: string;
  receiptSha256: string;
}

interface AllowRow {
  id: string;
  session_id: string;
  state: string;
  nonce_state: string;
  core: ReviewAssignmentCore;
  core_sha256: string;
  report_envelope: StoredEnvelope | null;
  receipt_sha256: string | null;
  verification: ReviewVerificationRecord | null;
}

function notAllowed(message: string): HttpError {
  return new HttpError(409, EVAL_ERROR_CODES.reviewNotAllowed, message);
}

async function currentAssignment(
  sql: Sql | TransactionSql,
  submissionId: string,
): Promise<AllowRow | undefined> {
  const [row] = await sql<AllowRow[]>`
    select a.id, a.session_id, a.state, a.nonce_state, a.core, a.core_sha256, a.report_envelope,
      a.receipt_sha256, a.verification
    from review_sessions s join review_assignments a on a.id = s.current_assignment_id
    where s.submission_id = ${submissionId}`;
  return row;
}

/** Re-verifies the allowing review of `submissionId` now (409 / 503 otherwise). */
export async function verifyAllow(
  sql: Sql,
  input: {
    submissionId: string;
    verifier: QuoteVerifier;
    now: Date;
    /** How old the report may be (24 h; an owner's revalidate waives it: Infinity). */
    maxAgeMs?: number;
  },
): Promise<VerifiedAllow> {
  const row = await currentAssignment(sql, input.submissionId);
  if (
    row?.state !== "allowed" ||
    row.nonce_state !== "consumed" ||
    row.verification?.status !== "verified" ||
    row.report_envelope === null ||
    row.receipt_sha256 === null
  ) {
    throw notAllowed(`Submission ${input.submissionId} has no verified allowing review.`);
  }
  const envelope = row.report_envelope;
  const core = envelope.review_core;
  if (
    input.now.getTime() - Date.parse(core.reported_at) >
    (input.maxAgeMs ?? REVIEW_FRESHNESS_MS)
  ) {
    throw new HttpError(
      409,
      EVAL_ERROR_CODES.reviewStale,
      "The allowing review report is older than 24 hours.",
      { extra: { reported_at: core.reported_at } },
    );
  }
  const expectedReportData = assignmentReportData(row.core, row.core_sha256, core.reported_at);
  if (
    canonicalDigest(core) !== envelope.review_digest ||
    core.assignment_digest !== row.core_sha256 ||
    core.assignment_id !== row.id ||
    core.verdict !== "allow" ||
    envelope.report_data_hex !== expectedReportData.toString("hex")
  ) {
    throw notAllowed("The stored allowing report no longer matches its assignment.");
  }
  const verdict = await verifyQuote(input.verifier, {
    assignmentId: row.id,
    firstReceipt: false,
    envelope,
    expectedReportData,
  });
  if (verdict === "unavailable") {
    throw new HttpError(
      503,
      EVAL_ERROR_CODES.verifierUnavailable,
      "The quote verifier cannot re-verify the allowing review now; nothing was issued.",
      { headers: { "retry-after": "30" } },
    );
  }
  if (verdict.status !== "verified" || verdict.outcome !== "allowed") {
    throw notAllowed(`The allowing review no longer verifies (${verdict.code ?? "not allowed"}).`);
  }
  return {
    assignmentId: row.id,
    sessionId: row.session_id,
    reviewDigest: envelope.review_digest,
    receiptSha256: row.receipt_sha256,
  };
}

/** Inside the issuing transaction: the verified receipt is still the session's current one. */
export async function confirmAllowUnchanged(
  tx: TransactionSql,
  submissionId: string,
  allow: VerifiedAllow,
): Promise<void> {
  const row = await currentAssignment(tx, submissionId);
  if (!row || row.id !== allow.assignmentId || row.receipt_sha256 !== allow.receiptSha256) {
    throw notAllowed("The allowing review changed while it was being verified.");
  }
}
