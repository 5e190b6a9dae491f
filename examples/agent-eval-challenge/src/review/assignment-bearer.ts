/**
 * The assignment-scoped bearer (`Authorization: Bearer <REVIEW_SESSION_TOKEN>`) of the review
 * VM's routes. The token is `<assignment id>.<HMAC>`; only its sha256 is stored. It is judged
 * twice: by the route's `bearer` check (`assignmentBearer`), which the SDK runs before the body
 * is read, so a caller without a token of this assignment learns nothing about the route's
 * schema; then inside the route's transaction, after lazy expiry, because the assignment's state
 * is part of the verdict: a cancelled assignment's token still verifies cryptographically (its
 * stored hash never changes), and only the state check revokes it.
 */
import {
  type BearerCheck,
  HttpError,
  type Sql,
  type TransactionSql,
} from "@platform/challenge-sdk";
import type { AgentEvalState } from "../agent-eval-state.js";
import {
  CapabilityDomain,
  checkCapabilityToken,
  deriveKey,
  KeyLabel,
  parseCapabilityToken,
} from "../crypto/index.js";
import type { Settings } from "../settings.js";
import {
  ACTIVE_ASSIGNMENT_STATES,
  type AssignmentState,
  FREELY_RETRYABLE_ASSIGNMENT_STATES,
} from "../state/index.js";
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

// Compared against when no row exists, so a missing assignment costs the same two
// constant-time comparisons as a present one (the MAC already fails for an id never issued).
const NO_STORED_HASH = "0".repeat(64);

function unauthorized(message: string): HttpError {
  return new HttpError(401, VM_ERROR_CODES.invalidToken, message, {
    headers: { "www-authenticate": "Bearer" },
  });
}

/** Whether `token` is assignment `assignmentId`'s and verifies against `storedHash`. */
function tokenOfAssignment(
  secretKey: Buffer,
  assignmentId: string,
  token: string,
  storedHash: string | undefined,
): boolean {
  const parsed = parseCapabilityToken(token);
  const verified = checkCapabilityToken(
    deriveKey(secretKey, KeyLabel.reviewToken),
    CapabilityDomain.reviewAssignment,
    token,
    storedHash ?? NO_STORED_HASH,
  );
  return parsed !== null && parsed.id === assignmentId && storedHash !== undefined && verified;
}

/**
 * The review VM routes' `bearer`: a token of the path's assignment whose MAC and stored hash
 * verify (else 401 invalid_token, before the body is read). Whether the assignment's state still
 * lets it in is judged by authorizeAssignment, in the route's transaction.
 */
export const assignmentBearer: BearerCheck<Settings, AgentEvalState> = async (
  token,
  { sql, state, pathParams },
) => {
  const assignmentId = pathParams["assignment_id"] ?? "";
  if (parseCapabilityToken(token)?.id !== assignmentId) return false;
  return tokenOfAssignment(
    state.secretKey,
    assignmentId,
    token,
    await storedHash(sql, assignmentId),
  );
};

async function storedHash(sql: Sql, assignmentId: string): Promise<string | undefined> {
  const [row] = await sql<{ token_sha256: string }[]>`
    select token_sha256 from review_assignments where id = ${assignmentId}`;
  return row?.token_sha256;
}

/** `Authorization: Bearer <token>`, or null (no header, another scheme, or no token). */
export function presentedBearer(headers: Headers): string | null {
  const value = headers.get("authorization");
  if (value === null) return null;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(value);
  return match ? match[1]! : null;
}

/**
 * The assignment `assignmentId` if `headers` carry its live token for `use`, else a 4xx:
 * 401 invalid_token for a missing or malformed token, one of another assignment, a MAC or hash
 * that does not verify, or a read of an assignment no longer active; 410 capability_revoked for
 * a write after cancel, expiry or failure. Call it inside a review transaction (lazy expiry
 * first). A write on a verdict state is left to the state module (409 invalid_transition).
 */
export async function authorizeAssignment(
  tx: TransactionSql,
  input: { headers: Headers; assignmentId: string; secretKey: Buffer; use: BearerUse },
): Promise<AuthorizedAssignment> {
  const token = presentedBearer(input.headers);
  if (token === null) throw unauthorized("Missing bearer token.");
  const parsed = parseCapabilityToken(token);
  if (parsed === null || parsed.id !== input.assignmentId) {
    throw unauthorized("The token is not a token of this assignment.");
  }
  const [row] = await tx<(AuthorizedAssignment & { token_sha256: string })[]>`
    select id, session_id, submission_id, state, core, core_sha256, expires_at, token_sha256,
      deployed, model_call, failure
    from review_assignments where id = ${input.assignmentId}`;
  // Verified whether or not the row exists: a missing assignment costs the same comparisons.
  const verified = tokenOfAssignment(input.secretKey, input.assignmentId, token, row?.token_sha256);
  if (!row || !verified) throw unauthorized("Invalid bearer token.");
  const active = (ACTIVE_ASSIGNMENT_STATES as readonly string[]).includes(row.state);
  if (input.use === "read" && !active) {
    throw unauthorized(`Assignment ${row.id} is no longer active (${row.state}).`);
  }
  // Cancelled, expired and error are exactly the states whose capability was revoked.
  if (
    input.use === "write" &&
    (FREELY_RETRYABLE_ASSIGNMENT_STATES as readonly string[]).includes(row.state)
  ) {
    throw new HttpError(
      410,
      VM_ERROR_CODES.capabilityRevoked,
      `The capability of assignment ${row.id} was revoked (${row.state}).`,
      { extra: { state: row.state } },
    );
  }
  const { token_sha256: _stored, ...assignment } = row;
  return assignment;
}
