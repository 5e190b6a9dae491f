import { databaseNow, HttpError, type Sql } from "@platform/challenge-sdk";
import { mintId } from "../crypto/index.js";
import { lockOwnedSubmission } from "./_owned-submission.js";
import { reviewTransaction } from "./_review-transaction.js";
import { lockReviewSession } from "./_session.js";
import { issueAssignment } from "./issue-assignment.js";
import { currentAnswer, type ReviewPrepareAnswer } from "./review-answer.js";
import { REVIEW_ERROR_CODES } from "./review-errors.js";

/** Who asks, for which submission, with what the instance holds. */
export interface ReviewRequest {
  submissionId: string;
  /** The verified hotkey of the signed request. */
  hotkey: string;
  secretKey: Buffer;
  rulesRevisionId: string;
  /** The time of the request; the database's now() when omitted (tests pass one). */
  now?: Date;
}

/**
 * review/prepare (rule 3), in one transaction: lazy expiry, the submission locked (and owned),
 * then either the session and its first assignment created (its token delivered in this answer),
 * or the current assignment answered (its token only if never delivered before, which, since
 * issuing delivers, is never for a well-behaved flow). A lost first answer is recovered through
 * cancel + retry, never by delivering the token twice.
 */
export function prepareReview(sql: Sql, request: ReviewRequest): Promise<ReviewPrepareAnswer> {
  return reviewTransaction(sql, request.now, async (tx) => {
    const submission = await lockOwnedSubmission(tx, request.submissionId, request.hotkey);
    const now = request.now ?? (await databaseNow(tx));
    const session = await lockReviewSession(tx, submission.id);
    if (session) {
      return currentAnswer(tx, { sessionId: session.id, secretKey: request.secretKey, now });
    }
    if (submission.state !== "received") {
      // Only a fresh submission starts a review; without a session, any other state was never
      // reached through these routes.
      throw new HttpError(
        409,
        REVIEW_ERROR_CODES.reviewNotAvailable,
        `Submission ${submission.id} is ${submission.state}: no review can start.`,
      );
    }
    const sessionId = mintId();
    const assignmentId = mintId();
    // The session points at an assignment inserted just after: that foreign key is deferred to
    // the commit, so the two rows exist together or not at all.
    await tx`
      insert into review_sessions (id, submission_id, current_assignment_id, attempts)
      values (${sessionId}, ${submission.id}, ${assignmentId}, 1)`;
    return issueAssignment(tx, {
      submission,
      assignmentId,
      sessionId,
      attempt: 1,
      predecessorId: null,
      rulesRevisionId: request.rulesRevisionId,
      secretKey: request.secretKey,
      now,
    });
  });
}
