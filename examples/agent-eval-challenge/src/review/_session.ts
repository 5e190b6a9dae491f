import type { Sql, TransactionSql } from "@platform/challenge-sdk";
import { notFound } from "../state/index.js";
import { REVIEW_ERROR_CODES } from "./review-errors.js";

/** A submission's review session, as the retry's compare-and-swap reads it. */
export interface ReviewSession {
  id: string;
  current_assignment_id: string;
  attempts: number;
}

/** The review session of `submissionId`, locked for this transaction, or undefined. */
export async function lockReviewSession(
  tx: TransactionSql,
  submissionId: string,
): Promise<ReviewSession | undefined> {
  const [row] = await tx<ReviewSession[]>`
    select id, current_assignment_id, attempts from review_sessions
    where submission_id = ${submissionId} for update`;
  return row;
}

/** Review session `sessionId` (its id and submission), or 404 review_session_not_found. */
export async function existingReviewSession(
  sql: Sql | TransactionSql,
  sessionId: string,
): Promise<{ id: string; submission_id: string }> {
  const [session] = await sql<{ id: string; submission_id: string }[]>`
    select id, submission_id from review_sessions where id = ${sessionId}`;
  if (!session)
    throw notFound(REVIEW_ERROR_CODES.reviewSessionNotFound, `Review session ${sessionId}`);
  return session;
}
