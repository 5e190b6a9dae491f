import { databaseNow, HttpError, type Sql } from "@platform/challenge-sdk";
import { mintId } from "../crypto/index.js";
import {
  APPROVAL_RETRYABLE_ASSIGNMENT_STATES,
  type AssignmentState,
  FREELY_RETRYABLE_ASSIGNMENT_STATES,
  MAX_ASSIGNMENT_ATTEMPTS,
  staleAssignment,
} from "../state/index.js";
import { lockOwnedSubmission } from "./_owned-submission.js";
import { reviewTransaction } from "./_review-transaction.js";
import { lockReviewSession } from "./_session.js";
import { issueAssignment } from "./issue-assignment.js";
import type { ReviewRequest } from "./prepare-review.js";
import type { ReviewPrepareAnswer } from "./review-answer.js";
import { REVIEW_ERROR_CODES } from "./review-errors.js";

/** review/retry's request: the assignment retried (compare-and-swap) and, if needed, an approval. */
export interface RetryRequest extends ReviewRequest {
  expectedAssignmentId: string;
  approvalId?: string | undefined;
}

/**
 * review/retry (rule 4), in one transaction: a fresh assignment (attempt + 1, its predecessor
 * named) only when `expectedAssignmentId` is the session's current assignment and it ended in a
 * retryable state: cancelled, expired, error freely; rejected, escalated only by consuming an
 * unused, unexpired operator approval bound to it; allowed never; at most 16 per session. The
 * session's pointer moves with `where current_assignment_id = $expected`, so of concurrent
 * retries exactly one issues an assignment and the others are stale.
 */
export function retryReview(sql: Sql, request: RetryRequest): Promise<ReviewPrepareAnswer> {
  return reviewTransaction(sql, request.now, async (tx) => {
    const submission = await lockOwnedSubmission(tx, request.submissionId, request.hotkey);
    const now = request.now ?? (await databaseNow(tx));
    const session = await lockReviewSession(tx, submission.id);
    if (!session) {
      throw new HttpError(
        404,
        REVIEW_ERROR_CODES.reviewSessionNotFound,
        `Submission ${submission.id} has no review session: prepare one first.`,
      );
    }
    const expected = request.expectedAssignmentId;
    if (session.current_assignment_id !== expected) {
      throw staleAssignment(expected, session.current_assignment_id);
    }
    const [predecessor] = await tx<{ state: AssignmentState }[]>`
      select state from review_assignments where id = ${expected}`;
    const state = predecessor!.state;
    const needsApproval = isOneOf(state, APPROVAL_RETRYABLE_ASSIGNMENT_STATES);
    if (state === "allowed") {
      throw new HttpError(
        409,
        REVIEW_ERROR_CODES.reviewAlreadyAllowed,
        `Assignment ${expected} allowed the submission: an allowed review is never retried.`,
      );
    }
    if (!needsApproval && !isOneOf(state, FREELY_RETRYABLE_ASSIGNMENT_STATES)) {
      throw new HttpError(
        409,
        REVIEW_ERROR_CODES.assignmentNotTerminal,
        `Assignment ${expected} is ${state}: cancel it (or let it finish) before a retry.`,
        { extra: { state } },
      );
    }
    if (session.attempts >= MAX_ASSIGNMENT_ATTEMPTS) {
      throw new HttpError(
        409,
        REVIEW_ERROR_CODES.attemptLimitReached,
        `The review session has issued its ${MAX_ASSIGNMENT_ATTEMPTS} assignments.`,
      );
    }
    const assignmentId = mintId();
    const moved = await tx`
      update review_sessions
      set current_assignment_id = ${assignmentId}, attempts = attempts + 1
      where id = ${session.id} and current_assignment_id = ${expected}
      returning id`;
    // Unreachable while the submission lock is held; kept so the rule does not rest on the lock.
    if (moved.length === 0) throw staleAssignment(expected, session.current_assignment_id);
    const issued = await issueAssignment(tx, {
      submission,
      assignmentId,
      sessionId: session.id,
      attempt: session.attempts + 1,
      predecessorId: expected,
      rulesRevisionId: request.rulesRevisionId,
      secretKey: request.secretKey,
      now,
    });
    // The approval is spent on this retry: it must exist, be bound to this session's `expected`,
    // be unused and unexpired; anything else is 409 approval_required (one code: which of the
    // conditions failed tells a caller nothing it may act on differently).
    const consumed =
      !needsApproval || request.approvalId === undefined
        ? []
        : await tx`
          update review_operator_approvals
          set used_at = ${now}, used_by_assignment_id = ${assignmentId}
          where id = ${request.approvalId} and session_id = ${session.id}
            and predecessor_assignment_id = ${expected}
            and used_at is null and expires_at > ${now}
          returning id`;
    if (needsApproval && consumed.length === 0) {
      throw new HttpError(
        409,
        REVIEW_ERROR_CODES.approvalRequired,
        `Assignment ${expected} was rejected or escalated: a retry needs an unused, unexpired operator approval bound to it.`,
      );
    }
    return issued;
  });
}

function isOneOf<T extends string>(value: string, values: readonly T[]): value is T {
  return (values as readonly string[]).includes(value);
}
