/**
 * The assignment-scoped bearer (`Authorization: Bearer <REVIEW_SESSION_TOKEN>`) of the review
 * VM's routes: a capability token of the assignment (crypto/capability-scopes.ts), only its
 * sha256 stored. The routes' `bearer` check (`assignmentBearer`) resolves it to the assignment,
 * before the body is read, after lazy expiry, so the assignment's state is part of the verdict:
 * a cancelled assignment's token still verifies cryptographically (its stored hash never
 * changes), and only the state revokes it. The handler gets the assignment as `ctx.bearer`.
 */
import { type BearerCheck, HttpError } from "@platform/challenge-sdk";
import { readCapabilityToken } from "@platform/challenge-sdk/tokens";
import type { AgentEvalState } from "../agent-eval-state.js";
import { tokenHolder } from "../crypto/index.js";
import type { Settings } from "../settings.js";
import {
  ACTIVE_ASSIGNMENT_STATES,
  type AssignmentState,
  FREELY_RETRYABLE_ASSIGNMENT_STATES,
} from "../state/index.js";
import { reviewTransaction } from "./_review-transaction.js";
import type { ReviewAssignmentCore } from "./issue-assignment.js";
import { VM_ERROR_CODES } from "./vm-errors.js";

/** A GET reads the assignment; a POST writes one of its records. */
export type BearerUse = "read" | "write";

/** The assignment a verified token opens, as the VM routes need it. */
export interface AuthorizedAssignment {
  id: string;
  session_id: string;
  submission_id: string;
  state: AssignmentState;
  core: ReviewAssignmentCore;
  core_sha256: string;
  expires_at: Date;
  deployed: Record<string, unknown> | null;
  model_call: Record<string, unknown> | null;
  failure: Record<string, unknown> | null;
}

/**
 * The review VM routes' `bearer`: the path's assignment, if the token is its live token for
 * `use`. Refused (before the body is read): 401 invalid_token for a malformed token, one of
 * another assignment, a MAC or hash that does not verify, or a read of an assignment no longer
 * active; 410 capability_revoked for a write after cancel, expiry or failure. A write on a
 * verdict state is left to the state module (409 invalid_transition).
 */
export function assignmentBearer(
  use: BearerUse,
): BearerCheck<Settings, AgentEvalState, AuthorizedAssignment | null> {
  return async (token, { sql, state, pathParams }) => {
    const assignmentId = pathParams["assignment_id"] ?? "";
    // A token of another assignment (or none at all) costs no query.
    if (readCapabilityToken(token)?.id !== assignmentId) return null;
    return reviewTransaction(sql, undefined, async (tx) => {
      const [row] = await tx<(AuthorizedAssignment & { token_sha256: string })[]>`
        select id, session_id, submission_id, state, core, core_sha256, expires_at, token_sha256,
          deployed, model_call, failure
        from review_assignments where id = ${assignmentId}`;
      const assignment = tokenHolder(token, state.secretKey, "reviewAssignment", assignmentId, row);
      if (assignment) judgeAssignment(assignment.id, assignment.state, use);
      return assignment;
    });
  };
}

/** Whether a live token of an assignment in `state` may still `use` it (else 401 / 410). */
function judgeAssignment(id: string, state: AssignmentState, use: BearerUse): void {
  const active = (ACTIVE_ASSIGNMENT_STATES as readonly string[]).includes(state);
  if (use === "read" && !active) {
    throw new HttpError(
      401,
      VM_ERROR_CODES.invalidToken,
      `Assignment ${id} is no longer active (${state}).`,
      { headers: { "www-authenticate": "Bearer" } },
    );
  }
  // Cancelled, expired and error are exactly the states whose capability was revoked.
  if (
    use === "write" &&
    (FREELY_RETRYABLE_ASSIGNMENT_STATES as readonly string[]).includes(state)
  ) {
    throw new HttpError(
      410,
      VM_ERROR_CODES.capabilityRevoked,
      `The capability of assignment ${id} was revoked (${state}).`,
      { extra: { state } },
    );
  }
}
