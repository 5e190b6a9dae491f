/**
 * The three review reads, one record (ReviewAuditResponse), three views of a session's
 * assignments, newest attempt first, paged with signed cursors (default 10, at most 16):
 * - history (rule 7): the owning miner's safe, retained record of every attempt: states, times,
 *   digests and outcome codes; never a token, nonce, evidence or model request;
 * - public_report (rule 8): any signed caller's deterministic redacted projection of the
 *   reported attempts: verdict, outcome, verifier, measurement, digests, finding check ids and
 *   severities, evidence refs. No message, path, summary or nonce. Serialised as RFC 8785
 *   canonical JSON, so the same records always give the same bytes (and the same ETag);
 * - internal_report (rule 9): the validator's full immutable bundle: core, deployment, model
 *   call, failure, stored envelope, verification, evidence refs, with the bundle's sha256.
 */
import { HttpError, type Sql, type TransactionSql } from "@platform/challenge-sdk";
import {
  canonicalDigest,
  deriveKey,
  encodeCursor,
  type JsonValue,
  KeyLabel,
} from "../crypto/index.js";
import { pagePosition } from "../paging.js";
import { type AssignmentState, notFound } from "../state/index.js";
import { reviewTransaction } from "./_review-transaction.js";
import { existingReviewSession } from "./_session.js";
import type { ReviewAssignmentCore } from "./issue-assignment.js";
import type { ReviewVerificationRecord } from "./receive-report.js";
import type { ReviewEnvelope } from "./review-envelope.js";
import { REVIEW_ERROR_CODES } from "./review-errors.js";

export type ReviewAuditView = "history" | "public_report" | "internal_report";

export const REVIEW_AUDIT_SCHEMA_VERSION = "review-audit/v1";
export const REVIEW_AUDIT_DEFAULT_LIMIT = 10;
export const REVIEW_AUDIT_MAX_LIMIT = 16;

export type ReviewAuditTarget =
  | { view: "history"; submissionId: string; hotkey: string }
  | { view: "public_report"; submissionId: string }
  | { view: "internal_report"; sessionId: string };

export interface ReviewAuditRequest {
  target: ReviewAuditTarget;
  cursor?: string;
  limit?: number;
  secretKey: Buffer;
}

export interface ReviewAuditPage {
  schema_version: typeof REVIEW_AUDIT_SCHEMA_VERSION;
  view: ReviewAuditView;
  submission_id: number;
  session_id: string | null;
  items: Record<string, JsonValue>[];
  next_cursor: string | null;
  bundle_sha256?: string;
}

interface AssignmentRow {
  id: string;
  attempt: number;
  predecessor_id: string | null;
  state: AssignmentState;
  core: ReviewAssignmentCore;
  core_sha256: string;
  issued_at: Date;
  expires_at: Date;
  deployed: Record<string, JsonValue> | null;
  deployed_at: Date | null;
  model_call: Record<string, JsonValue> | null;
  model_call_at: Date | null;
  failure: Record<string, JsonValue> | null;
  failed_at: Date | null;
  report_envelope: Omit<ReviewEnvelope, "evidence"> | null;
  receipt_sha256: string | null;
  reported_at: Date | null;
  verification: ReviewVerificationRecord | null;
  verified_at: Date | null;
}

interface EvidenceRow {
  assignment_id: string;
  object_ref: string;
  name: string;
  media_type: string;
  length: number;
  sha256: string;
}

/** One page of one view (404/403 as the view requires; 400 invalid_cursor). */
export function reviewAudit(sql: Sql, request: ReviewAuditRequest): Promise<ReviewAuditPage> {
  return reviewTransaction(sql, undefined, async (tx) => {
    const { target } = request;
    const { submissionId, sessionId } = await resolveSession(tx, target);
    const page: ReviewAuditPage = {
      schema_version: REVIEW_AUDIT_SCHEMA_VERSION,
      view: target.view,
      submission_id: Number(submissionId),
      session_id: sessionId,
      items: [],
      next_cursor: null,
    };
    if (sessionId === null) return page;

    const cursorKey = deriveKey(request.secretKey, KeyLabel.cursor);
    const scope = `review-audit:${target.view}:${sessionId}`;
    const before = pagePosition(cursorKey, scope, request.cursor);
    const limit = Math.min(request.limit ?? REVIEW_AUDIT_DEFAULT_LIMIT, REVIEW_AUDIT_MAX_LIMIT);
    const reportedOnly = target.view === "public_report";
    const rows = await tx<AssignmentRow[]>`
      select id, attempt, predecessor_id, state, core, core_sha256, issued_at, expires_at,
        deployed, deployed_at, model_call, model_call_at, failure, failed_at, report_envelope,
        receipt_sha256, reported_at, verification, verified_at
      from review_assignments
      where session_id = ${sessionId}
        and (${before}::int is null or attempt < ${before}::int)
        and (not ${reportedOnly} or report_envelope is not null)
      order by attempt desc
      limit ${limit + 1}`;
    const shown = rows.slice(0, limit);
    if (rows.length > limit) {
      page.next_cursor = encodeCursor(cursorKey, scope, shown.at(-1)!.attempt);
    }
    const evidence = await evidenceOf(
      tx,
      sessionId,
      shown.map((row) => row.id),
    );
    page.items = shown.map((row) => itemOf(target.view, row, evidence.get(row.id) ?? []));
    if (target.view === "internal_report") {
      page.bundle_sha256 = canonicalDigest(page.items);
    }
    return page;
  });
}

async function resolveSession(
  tx: TransactionSql,
  target: ReviewAuditTarget,
): Promise<{ submissionId: string; sessionId: string | null }> {
  if (target.view === "internal_report") {
    const session = await existingReviewSession(tx, target.sessionId);
    return { submissionId: session.submission_id, sessionId: session.id };
  }
  const [submission] = await tx<{ id: string; hotkey: string; session_id: string | null }[]>`
    select s.id, s.hotkey, r.id as session_id
    from submissions s left join review_sessions r on r.submission_id = s.id
    where s.id = ${target.submissionId}`;
  if (!submission) {
    throw notFound(REVIEW_ERROR_CODES.submissionNotFound, `Submission ${target.submissionId}`);
  }
  if (target.view === "history" && submission.hotkey !== target.hotkey) {
    throw new HttpError(
      403,
      REVIEW_ERROR_CODES.notSubmissionOwner,
      `Submission ${target.submissionId} belongs to another hotkey.`,
    );
  }
  return { submissionId: submission.id, sessionId: submission.session_id };
}

async function evidenceOf(
  tx: TransactionSql,
  sessionId: string,
  assignmentIds: string[],
): Promise<Map<string, EvidenceRow[]>> {
  const byAssignment = new Map<string, EvidenceRow[]>();
  if (assignmentIds.length === 0) return byAssignment;
  const rows = await tx<EvidenceRow[]>`
    select assignment_id, object_ref, name, media_type, length, sha256
    from review_evidence
    where session_id = ${sessionId} and assignment_id in ${tx(assignmentIds)}
    order by assignment_id, name`;
  for (const row of rows) {
    const list = byAssignment.get(row.assignment_id) ?? [];
    list.push(row);
    byAssignment.set(row.assignment_id, list);
  }
  return byAssignment;
}

const iso = (value: Date | null): string | null => (value === null ? null : value.toISOString());

function itemOf(
  view: ReviewAuditView,
  row: AssignmentRow,
  evidence: EvidenceRow[],
): Record<string, JsonValue> {
  const common: Record<string, JsonValue> = {
    assignment_id: row.id,
    attempt: row.attempt,
    state: row.state,
    assignment_digest: row.core_sha256,
    issued_at: iso(row.issued_at),
    reported_at: iso(row.reported_at),
    verified_at: iso(row.verified_at),
    outcome: row.verification?.outcome ?? null,
    verification_code: row.verification?.code ?? null,
    review_digest: row.report_envelope?.review_digest ?? null,
    receipt_sha256: row.receipt_sha256,
  };
  const timeline: Record<string, JsonValue> = {
    predecessor_id: row.predecessor_id,
    expires_at: iso(row.expires_at),
    deployed_at: iso(row.deployed_at),
    model_call_at: iso(row.model_call_at),
    failed_at: iso(row.failed_at),
    failure_reason_code: (row.failure?.reason_code as string | undefined) ?? null,
  };
  if (view === "history") return { ...common, ...timeline };

  const refs = evidence.map((object) => ({
    ...(view === "internal_report" ? { object_ref: object.object_ref } : {}),
    name: object.name,
    media_type: object.media_type,
    length: object.length,
    sha256: object.sha256,
  }));
  if (view === "public_report") {
    const core = row.report_envelope?.review_core ?? null;
    return {
      ...common,
      verdict: core?.verdict ?? null,
      verifier: row.verification?.verifier ?? null,
      confidential: row.verification?.confidential ?? null,
      measurement: row.verification?.measurement ?? null,
      tcb_status: row.verification?.tcb_status ?? null,
      advisory_ids: row.verification?.advisory_ids ?? null,
      // Check ids and severities only: messages and paths may quote the miner's code.
      findings: (core?.findings ?? [])
        .map((finding) => ({ check_id: finding.check_id, severity: finding.severity }))
        .sort((a, b) =>
          a.check_id === b.check_id
            ? a.severity.localeCompare(b.severity)
            : a.check_id.localeCompare(b.check_id),
        ),
      evidence: refs,
    };
  }
  return {
    ...common,
    ...timeline,
    core: row.core as unknown as JsonValue,
    deployed: row.deployed,
    model_call: row.model_call,
    failure: row.failure,
    envelope: row.report_envelope as unknown as JsonValue,
    verification: row.verification as unknown as JsonValue,
    evidence: refs,
  };
}
