import { randomBytes } from "node:crypto";
import type { Static, TransactionSql } from "@platform/challenge-sdk";
import { canonicalDigest, capabilityToken } from "../crypto/index.js";
import { ASSIGNMENT_TTL_SECONDS, appendStatusEvent, transitionSubmission } from "../state/index.js";
import type { OwnedSubmission } from "./_owned-submission.js";
import { issuedAnswer, type ReviewPrepareAnswer } from "./review-answer.js";
import type { ReviewAssignmentCore as ReviewAssignmentCoreSchema } from "./review-schemas.js";

export const REVIEW_ASSIGNMENT_SCHEMA_VERSION = "review-assignment/v1";

/** The immutable assignment core (review assignment v1), exactly as stored and digested. */
export type ReviewAssignmentCore = Static<typeof ReviewAssignmentCoreSchema>;

/**
 * Inserts assignment `attempt` of `sessionId` (state queued, token delivered now: the answer
 * carries it, the one delivery), appends its "issue" status event and moves the submission to
 * review_queued through the state module. The caller holds the submission lock and points the
 * session at the new assignment in the same transaction.
 */
export async function issueAssignment(
  tx: TransactionSql,
  input: {
    submission: OwnedSubmission;
    /** Minted by the caller, who may point the session at it first (the key is deferred). */
    assignmentId: string;
    sessionId: string;
    attempt: number;
    predecessorId: string | null;
    rulesRevisionId: string;
    secretKey: Buffer;
    now: Date;
  },
): Promise<ReviewPrepareAnswer> {
  const { submission, assignmentId, now } = input;
  const expiresAt = new Date(now.getTime() + ASSIGNMENT_TTL_SECONDS * 1000);
  const core: ReviewAssignmentCore = {
    schema_version: REVIEW_ASSIGNMENT_SCHEMA_VERSION,
    assignment_id: assignmentId,
    session_id: input.sessionId,
    submission_id: Number(submission.id),
    attempt: input.attempt,
    artifact_sha256: submission.artifact_sha256,
    artifact_size: submission.size,
    rules_revision_id: input.rulesRevisionId,
    nonce: randomBytes(24).toString("base64url"),
    issued_at: now.toISOString(),
    expires_at: expiresAt.toISOString(),
  };
  const digest = canonicalDigest(core);
  const { token, hash } = capabilityToken(input.secretKey, "reviewAssignment", assignmentId);
  await tx`
    insert into review_assignments (
      id, session_id, submission_id, attempt, predecessor_id, core, core_sha256, state,
      token_sha256, token_delivered_at, nonce, nonce_state, issued_at, expires_at)
    values (
      ${assignmentId}, ${input.sessionId}, ${submission.id}, ${input.attempt},
      ${input.predecessorId}, ${tx.json(core as never)}, ${digest}, 'queued', ${hash},
      ${now}, ${core.nonce}, 'active', ${now}, ${expiresAt})`;
  await appendStatusEvent(tx, {
    submissionId: submission.id,
    machine: "assignment",
    subjectId: assignmentId,
    event: "issue",
    fromState: null,
    toState: "queued",
    actor: "miner",
    reasonCode: input.predecessorId === null ? null : "retry",
    at: now,
  });
  await transitionSubmission(tx, {
    submissionId: submission.id,
    event: "review_issue",
    actor: "miner",
    now,
  });
  return issuedAnswer(core, digest, token);
}
