import { HttpError, type Sql } from "@platform/challenge-sdk";
import { staleAssignment, transitionAssignment } from "../state/index.js";
import { lockOwnedSubmission } from "./_owned-submission.js";
import { reviewTransaction } from "./_review-transaction.js";
import { lockReviewSession } from "./_session.js";
import { REVIEW_ERROR_CODES } from "./review-errors.js";

/** review/cancel's request: who, which submission, which assignment. */
export interface CancelRequest {
  submissionId: string;
  hotkey: string;
  assignmentId: string;
  now?: Date;
}

/**
 * review/cancel (rule 5), in one transaction: the named assignment, if it is the session's
 * current one, moves by "cancel" through the state module, which revokes its nonce. The token's
 * stored hash is immutable, so the capability dies with the state: an assignment route must
 * accept a token only while its assignment is active. Another
 * assignment of the session is 409 stale_assignment; one of another submission is 404 (no
 * cancelling through someone else's submission); a state the table does not cancel from is 409
 * invalid_transition.
 */
export function cancelReview(
  sql: Sql,
  request: CancelRequest,
): Promise<{ assignment_id: string; state: "cancelled" }> {
  return reviewTransaction(sql, request.now, async (tx) => {
    const submission = await lockOwnedSubmission(tx, request.submissionId, request.hotkey);
    const session = await lockReviewSession(tx, submission.id);
    const [named] = session
      ? await tx<{ id: string }[]>`
          select id from review_assignments
          where id = ${request.assignmentId} and session_id = ${session.id}`
      : [];
    if (!session || !named) {
      throw new HttpError(
        404,
        REVIEW_ERROR_CODES.assignmentNotFound,
        `Assignment ${request.assignmentId} not found for submission ${submission.id}.`,
      );
    }
    if (session.current_assignment_id !== request.assignmentId) {
      throw staleAssignment(request.assignmentId, session.current_assignment_id);
    }
    await transitionAssignment(tx, {
      assignmentId: request.assignmentId,
      event: "cancel",
      actor: "miner",
      ...(request.now ? { now: request.now } : {}),
    });
    return { assignment_id: request.assignmentId, state: "cancelled" as const };
  });
}
