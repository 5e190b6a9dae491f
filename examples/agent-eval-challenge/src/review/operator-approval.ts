import { databaseNow, HttpError, type Sql } from "@platform/challenge-sdk";
import { mintId } from "../crypto/index.js";
import { APPROVAL_RETRYABLE_ASSIGNMENT_STATES, appendStatusEvent } from "../state/index.js";
import { reviewTransaction } from "./_review-transaction.js";
import { existingReviewSession } from "./_session.js";
import { REVIEW_ERROR_CODES } from "./review-errors.js";

/** An approval lives this long (the migration refuses more than 300 s). */
export const APPROVAL_TTL_SECONDS = 300;

/** Who the internal bearer is: the validator (its master), the only holder of the token. */
export const APPROVER_VALIDATOR = "validator";

export interface ApprovalRequest {
  sessionId: string;
  assignmentId: string;
  reason: string;
  now?: Date;
}

/**
 * A validator's one-use approval (rule 10) to retry after assignment `assignmentId` of session
 * `sessionId`, which must be rejected or escalated (an immutable, terminal attempt). It expires
 * after 300 s and is consumed by the retry it permits. The table has no reason column: the
 * reason is recorded on an "approve_retry" status event of the assignment (state unchanged), so
 * the history says who approved what and why.
 */
export function createOperatorApproval(
  sql: Sql,
  request: ApprovalRequest,
): Promise<{ approval_id: string; assignment_id: string; expires_at: string }> {
  return reviewTransaction(sql, request.now, async (tx) => {
    const now = request.now ?? (await databaseNow(tx));
    const session = await existingReviewSession(tx, request.sessionId);
    const [assignment] = await tx<{ state: string; submission_id: string }[]>`
      select state, submission_id from review_assignments
      where id = ${request.assignmentId} and session_id = ${session.id}`;
    if (!assignment) {
      throw new HttpError(
        404,
        REVIEW_ERROR_CODES.assignmentNotFound,
        `Assignment ${request.assignmentId} not found in review session ${session.id}.`,
      );
    }
    // No lock needed: rejected and escalated are terminal, so the state read cannot change.
    if (!(APPROVAL_RETRYABLE_ASSIGNMENT_STATES as readonly string[]).includes(assignment.state)) {
      throw new HttpError(
        409,
        REVIEW_ERROR_CODES.approvalNotApplicable,
        `Assignment ${request.assignmentId} is ${assignment.state}: approvals are for rejected or escalated assignments only.`,
        { extra: { state: assignment.state } },
      );
    }
    const approvalId = mintId();
    const expiresAt = new Date(now.getTime() + APPROVAL_TTL_SECONDS * 1000);
    await tx`
      insert into review_operator_approvals
        (id, session_id, predecessor_assignment_id, approved_by, created_at, expires_at)
      values (${approvalId}, ${session.id}, ${request.assignmentId}, ${APPROVER_VALIDATOR},
              ${now}, ${expiresAt})`;
    await appendStatusEvent(tx, {
      submissionId: assignment.submission_id,
      machine: "assignment",
      subjectId: request.assignmentId,
      event: "approve_retry",
      fromState: assignment.state,
      toState: assignment.state,
      actor: "operator",
      reason: request.reason,
      at: now,
    });
    return {
      approval_id: approvalId,
      assignment_id: request.assignmentId,
      expires_at: expiresAt.toISOString(),
    };
  });
}
