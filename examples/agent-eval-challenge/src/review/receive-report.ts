/**
 * POST /review/v1/assignments/{id}/report (rule 20): receipt one immutable, quote-bound review
 * envelope and verify it, in the order schema (the route's body), digests, binding, time order
 * (review-envelope.ts), quote (the configured verifier: signature chain, report_data,
 * measurement allow-list), event log and claimed measurement.
 *
 * Two transactions around the verifier, so a slow or unreachable collateral service never holds
 * a row lock: the first stores the envelope (verifying) or, when a local check fails, rejects at
 * once; the quote is verified outside; the second records the outcome. "Verifier unavailable"
 * records nothing: the answer is 503, the assignment stays verifying with its nonce, and the
 * identical envelope posted again is verified again. A definitive outcome consumes the nonce.
 * First receipt 202; an identical replay 200 with the outcome; a different envelope 409.
 */

import type { Logger, Static } from "@platform/challenge-sdk";
import { HttpError, type Sql, type TransactionSql } from "@platform/challenge-sdk";
import {
  decidedVerification,
  type QuoteVerifier,
  rejected,
  verifierUnavailable,
  verifyAttestation,
} from "../attestation/index.js";
import { deriveKey, KeyLabel, seal } from "../crypto/index.js";
import {
  type AssignmentEvent,
  type AssignmentState,
  transitionAssignment,
} from "../state/index.js";
import { reviewTransaction } from "./_review-transaction.js";
import type { AuthorizedAssignment } from "./assignment-bearer.js";
import type { ReviewAssignmentCore } from "./issue-assignment.js";
import {
  assignmentReportData,
  type CheckedEvidence,
  checkEnvelopeLocally,
  envelopeReceiptSha256,
  envelopeWithoutEvidenceBytes,
  type ReviewEnvelope,
} from "./review-envelope.js";
import type { ReviewReportReceiptResponse, ReviewVerification } from "./review-envelope-schemas.js";
import { VM_ERROR_CODES } from "./vm-errors.js";
import type { PlannedModelCall } from "./vm-writes.js";

/** The report route's body limit: the evidence (base64), the quote and the core, with room. */
export const MAX_REVIEW_ENVELOPE_BYTES = 3 * 1024 * 1024;

/** The definitive outcome of a report, stored write-once with the assignment. */
export type ReviewVerificationRecord = Static<typeof ReviewVerification>;

/** The receipt the route answers (ReviewReportReceiptResponse). */
export type ReportReceipt = Static<typeof ReviewReportReceiptResponse>;

/** What the route answers: the receipt and whether this request was the first receipt. */
export interface ReportAnswer {
  status: 200 | 202;
  receipt: ReportReceipt;
}

/** The stored envelope: the posted one without the evidence bytes (those are sealed apart). */
export type StoredEnvelope = Omit<ReviewEnvelope, "evidence">;

interface ReportRow {
  id: string;
  session_id: string;
  state: AssignmentState;
  core: ReviewAssignmentCore;
  core_sha256: string;
  model_call: PlannedModelCall | null;
  model_call_at: Date | null;
  report_envelope: StoredEnvelope | null;
  receipt_sha256: string | null;
  reported_at: Date | null;
  verification: ReviewVerificationRecord | null;
}

/** What the quote stage needs once the envelope is stored (first receipt or a replay). */
export interface PendingVerification {
  assignmentId: string;
  firstReceipt: boolean;
  envelope: StoredEnvelope;
  expectedReportData: Buffer;
}

export interface ReceiveReportInput {
  /** The assignment the route's bearer opened for a write (410 already refused). */
  assignment: AuthorizedAssignment;
  envelope: ReviewEnvelope;
  secretKey: Buffer;
  verifier: QuoteVerifier;
  log: Logger;
}

export async function receiveReport(sql: Sql, input: ReceiveReportInput): Promise<ReportAnswer> {
  const receiptSha256 = envelopeReceiptSha256(input.envelope);
  const first = await reviewTransaction(sql, undefined, (tx) =>
    receiptOrPending(tx, input, receiptSha256),
  );
  if ("receipt" in first) return first;

  const verification = await verifyQuote(input.verifier, first);
  if (verification === "unavailable") {
    input.log.warn("review report parked: the quote verifier is unavailable", {
      assignment_id: first.assignmentId,
    });
    throw verifierUnavailable(
      "the report is kept with its nonce. Post the same envelope again later.",
    );
  }
  const receipt = await reviewTransaction(sql, undefined, (tx) =>
    recordOutcome(tx, first.assignmentId, verification),
  );
  return { status: first.firstReceipt ? 202 : 200, receipt };
}

/**
 * Transaction 1 (the bearer already refused a revoked write with 410): either the stored outcome
 * (an identical replay), a 409 (a different envelope), a definitive local rejection, or the
 * envelope stored and its quote left to verify.
 */
async function receiptOrPending(
  tx: TransactionSql,
  input: ReceiveReportInput,
  receiptSha256: string,
): Promise<ReportAnswer | PendingVerification> {
  const assignmentId = input.assignment.id;
  const row = await reload(tx, assignmentId, true);

  if (row.receipt_sha256 !== null) {
    if (row.receipt_sha256 !== receiptSha256) {
      throw new HttpError(
        409,
        VM_ERROR_CODES.reportConflict,
        `Assignment ${row.id} already received another report.`,
        { extra: { receipt_sha256: row.receipt_sha256 } },
      );
    }
    if (row.verification !== null) return { status: 200, receipt: receiptOf(row) };
    // Received, never decided (the verifier was unavailable): verify the stored envelope again.
    const envelope = row.report_envelope!;
    return {
      assignmentId: row.id,
      firstReceipt: false,
      envelope,
      expectedReportData: assignmentReportData(
        row.core,
        row.core_sha256,
        envelope.review_core.reported_at,
      ),
    };
  }

  const now = new Date();
  const checked = checkEnvelopeLocally(
    input.envelope,
    {
      core: row.core,
      coreSha256: row.core_sha256,
      modelCall: row.model_call,
      modelCallAt: row.model_call_at,
    },
    now,
  );
  const stored = envelopeWithoutEvidenceBytes(input.envelope) as StoredEnvelope;
  // The state module refuses a report before model-call-started (409 invalid_transition).
  await transitionAssignment(tx, {
    assignmentId: row.id,
    event: "receive_report",
    actor: "review_vm",
    records: { reportEnvelope: stored, receiptSha256 },
  });
  if (!checked.ok) {
    await transitionAssignment(tx, {
      assignmentId: row.id,
      event: "fail_verification",
      actor: "system",
      reasonCode: checked.code,
      records: {
        verification: {
          ...decidedVerification(input.verifier, rejected(checked.code, checked.message)),
          outcome: "rejected",
        },
      },
    });
    return { status: 202, receipt: receiptOf(await reload(tx, row.id)) };
  }
  await storeEvidence(tx, row, checked.evidence, input.secretKey);
  return {
    assignmentId: row.id,
    firstReceipt: true,
    envelope: stored,
    expectedReportData: checked.expectedReportData,
  };
}

/** The quote stage: the verifier, then the event log replay and the claimed measurement. */
export async function verifyQuote(
  verifier: QuoteVerifier,
  pending: PendingVerification,
): Promise<ReviewVerificationRecord | "unavailable"> {
  const { attestation, review_core: core } = pending.envelope;
  const verdict = await verifyAttestation(verifier, attestation, pending.expectedReportData);
  if (verdict.status === "unavailable") return "unavailable";
  const outcome =
    verdict.status === "rejected"
      ? "rejected"
      : ({ allow: "allowed", reject: "rejected", escalate: "escalated" } as const)[core.verdict];
  return { ...decidedVerification(verifier, verdict), outcome };
}

/**
 * Transaction 2: the outcome, unless a concurrent identical post recorded it first (then its
 * outcome stands: the first definitive verdict is the only one).
 */
async function recordOutcome(
  tx: TransactionSql,
  assignmentId: string,
  verification: ReviewVerificationRecord,
): Promise<ReportReceipt> {
  const row = await reload(tx, assignmentId, true);
  if (row.verification !== null) return receiptOf(row);
  if (row.state !== "verifying") {
    // Expired while the verifier was being asked (its 30 minutes ran out): nothing to decide.
    throw new HttpError(
      410,
      VM_ERROR_CODES.capabilityRevoked,
      `The capability of assignment ${row.id} was revoked (${row.state}).`,
      { extra: { state: row.state } },
    );
  }
  const event: AssignmentEvent =
    verification.status === "rejected"
      ? "fail_verification"
      : ({ allowed: "allow", rejected: "reject", escalated: "escalate" } as const)[
          verification.outcome
        ];
  await transitionAssignment(tx, {
    assignmentId,
    event,
    actor: "system",
    reasonCode: verification.code,
    records: { verification },
  });
  return receiptOf(await reload(tx, assignmentId));
}

/** Each evidence object sealed under the evidence key, its object ref as associated data. */
async function storeEvidence(
  tx: TransactionSql,
  row: ReportRow,
  evidence: CheckedEvidence[],
  secretKey: Buffer,
): Promise<void> {
  if (evidence.length === 0) return;
  const key = deriveKey(secretKey, KeyLabel.evidenceEncryption);
  const rows = evidence.map((object) => {
    const objectRef = evidenceObjectRef(row.id, object.name);
    return {
      session_id: row.session_id,
      object_ref: objectRef,
      assignment_id: row.id,
      name: object.name,
      media_type: object.mediaType,
      length: object.bytes.length,
      sha256: object.sha256,
      sealed: seal(key, object.bytes, evidenceAad(row.session_id, objectRef)),
    };
  });
  await tx`insert into review_evidence ${tx(rows)}`;
}

/** The ref an evidence object is served under: unique in its session, whatever the attempt. */
export function evidenceObjectRef(assignmentId: string, name: string): string {
  return `${assignmentId}.${name}`;
}

/** Binds a sealed object to its place: moved to another row, it no longer opens. */
export function evidenceAad(sessionId: string, objectRef: string): string {
  return `review-evidence:${sessionId}:${objectRef}`;
}

async function reload(tx: TransactionSql, assignmentId: string, lock = false): Promise<ReportRow> {
  const [row] = await tx<ReportRow[]>`
    select id, session_id, state, core, core_sha256, model_call, model_call_at, report_envelope,
      receipt_sha256, reported_at, verification
    from review_assignments where id = ${assignmentId} ${lock ? tx`for update` : tx``}`;
  if (!row) throw new Error(`assignment ${assignmentId} vanished inside its transaction`);
  return row;
}

function receiptOf(row: ReportRow): ReportReceipt {
  return {
    assignment_id: row.id,
    session_id: row.session_id,
    state: row.state,
    receipt_sha256: row.receipt_sha256!,
    review_digest: row.report_envelope!.review_digest,
    received_at: row.reported_at!.toISOString(),
    verification: row.verification!,
  };
}
