import type { Static, TransactionSql } from "@platform/challenge-sdk";
import { capabilityToken } from "../crypto/index.js";
import type { AssignmentState } from "../state/index.js";
import type { ReviewAssignmentCore } from "./issue-assignment.js";
import type { ReviewPrepareResponse } from "./review-schemas.js";

/** The body of review/prepare and review/retry (ReviewPrepareResponse). */
export type ReviewPrepareAnswer = Static<typeof ReviewPrepareResponse>;

/** The environment variable the review VM reads its token from. */
export const REVIEW_TOKEN_ENV_KEY = "REVIEW_SESSION_TOKEN";

/** The answer for a freshly issued assignment: the one delivery of its token. */
export function issuedAnswer(
  core: ReviewAssignmentCore,
  digest: string,
  token: string,
): ReviewPrepareAnswer {
  return {
    ...answerFields(core, digest, "queued"),
    secret_delivery: { env_key: REVIEW_TOKEN_ENV_KEY, token },
  };
}

/**
 * The answer for the session's current assignment: its core and digest, and its token only if it
 * was never delivered (token_delivered_at null -> set now, in the caller's transaction, which
 * holds the submission lock: of any number of concurrent prepares exactly one sees null).
 */
export async function currentAnswer(
  tx: TransactionSql,
  input: { sessionId: string; secretKey: Buffer; now: Date },
): Promise<ReviewPrepareAnswer> {
  const [row] = await tx<
    {
      id: string;
      state: AssignmentState;
      core: ReviewAssignmentCore;
      core_sha256: string;
      token_delivered_at: Date | null;
    }[]
  >`
    select a.id, a.state, a.core, a.core_sha256, a.token_delivered_at
    from review_sessions s join review_assignments a on a.id = s.current_assignment_id
    where s.id = ${input.sessionId}`;
  // The session's foreign key guarantees its current assignment exists.
  const current = row!;
  const answer = answerFields(current.core, current.core_sha256, current.state);
  if (current.token_delivered_at !== null) return answer;
  const delivered = await tx`
    update review_assignments set token_delivered_at = ${input.now}
    where id = ${current.id} and token_delivered_at is null
    returning id`;
  if (delivered.length === 0) return answer;
  // Tokens are deterministic (an HMAC of the id): re-deriving it is how it is delivered without
  // ever being stored.
  const { token } = capabilityToken(input.secretKey, "reviewAssignment", current.id);
  return { ...answer, secret_delivery: { env_key: REVIEW_TOKEN_ENV_KEY, token } };
}

function answerFields(
  core: ReviewAssignmentCore,
  digest: string,
  state: AssignmentState,
): ReviewPrepareAnswer {
  return {
    assignment_id: core.assignment_id,
    session_id: core.session_id,
    state,
    assignment: core,
    assignment_digest: digest,
    expires_at: core.expires_at,
  };
}
