import type { TransactionSql } from "@platform/challenge-sdk";

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
