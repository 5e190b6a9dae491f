import { HttpError, type TransactionSql } from "@platform/challenge-sdk";
import { notFound, type SubmissionState } from "../state/index.js";
import { REVIEW_ERROR_CODES } from "./review-errors.js";

/** The submission row a review write holds locked until its transaction ends. */
export interface OwnedSubmission {
  id: string;
  state: SubmissionState;
  artifact_sha256: string;
  size: number;
}

/**
 * Locks submission `id` (`for update`) after checking it is `hotkey`'s: 404
 * submission_not_found, 403 not_submission_owner. The lock is what serialises every review write
 * of one submission (50 concurrent prepares, two concurrent retries): the second waits, then sees
 * what the first committed.
 */
export async function lockOwnedSubmission(
  tx: TransactionSql,
  id: string,
  hotkey: string,
): Promise<OwnedSubmission> {
  const [row] = await tx<(OwnedSubmission & { hotkey: string })[]>`
    select id, hotkey, state, artifact_sha256, size from submissions where id = ${id} for update`;
  if (!row) {
    throw notFound(REVIEW_ERROR_CODES.submissionNotFound, `Submission ${id}`);
  }
  if (row.hotkey !== hotkey) {
    throw new HttpError(
      403,
      REVIEW_ERROR_CODES.notSubmissionOwner,
      `Submission ${id} belongs to another hotkey.`,
    );
  }
  return { id: row.id, state: row.state, artifact_sha256: row.artifact_sha256, size: row.size };
}
