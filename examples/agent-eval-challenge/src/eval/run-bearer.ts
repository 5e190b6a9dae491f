/**
 * The run-scoped bearer (`Authorization: Bearer <EVAL_RUN_TOKEN>`) of the eval VM's routes. The
 * token is `<run id>.<HMAC>`; only its sha256 is stored. Judged inside the route's transaction,
 * after lazy expiry: a cancelled, expired or failed run's token still verifies cryptographically,
 * and only the state revokes it (410 on these writes).
 */
import { HttpError, type TransactionSql } from "@platform/challenge-sdk";
import {
  CapabilityDomain,
  checkCapabilityToken,
  deriveKey,
  KeyLabel,
  parseCapabilityToken,
} from "../crypto/index.js";
import { presentedBearer } from "../review/assignment-bearer.js";
import { type EvalRunState, RETRYABLE_EVAL_RUN_STATES } from "../state/index.js";
import type { EvalPlan } from "./eval-plan.js";

export const RUN_BEARER_CODES = {
  /** 401: no bearer, a malformed one, another run's, or a MAC or hash that does not verify. */
  invalidToken: "invalid_token",
  /** 410: the run was cancelled, expired or failed: its token opens nothing any more. */
  capabilityRevoked: "capability_revoked",
} as const;

export interface AuthorizedRun {
  id: string;
  submission_id: string;
  review_assignment_id: string;
  state: EvalRunState;
  plan: EvalPlan;
  plan_sha256: string;
}

const NO_STORED_HASH = "0".repeat(64);

/** The run `runId` if `headers` carry its live token, else 401 / 410. Lock it (`for update`). */
export async function authorizeRun(
  tx: TransactionSql,
  input: { headers: Headers; runId: string; secretKey: Buffer },
): Promise<AuthorizedRun> {
  const unauthorized = (message: string) =>
    new HttpError(401, RUN_BEARER_CODES.invalidToken, message, {
      headers: { "www-authenticate": "Bearer" },
    });
  const token = presentedBearer(input.headers);
  if (token === null) throw unauthorized("Missing bearer token.");
  const parsed = parseCapabilityToken(token);
  if (parsed === null || parsed.id !== input.runId) {
    throw unauthorized("The token is not a token of this run.");
  }
  const [row] = await tx<(AuthorizedRun & { token_sha256: string })[]>`
    select id, submission_id, review_assignment_id, state, plan, plan_sha256, token_sha256
    from eval_runs where id = ${input.runId} for update`;
  const verified = checkCapabilityToken(
    deriveKey(input.secretKey, KeyLabel.runToken),
    CapabilityDomain.evalRun,
    token,
    row?.token_sha256 ?? NO_STORED_HASH,
  );
  if (!row || !verified) throw unauthorized("Invalid bearer token.");
  if ((RETRYABLE_EVAL_RUN_STATES as readonly string[]).includes(row.state)) {
    throw new HttpError(
      410,
      RUN_BEARER_CODES.capabilityRevoked,
      `The capability of eval run ${row.id} was revoked (${row.state}).`,
      { extra: { state: row.state } },
    );
  }
  const { token_sha256: _stored, ...run } = row;
  return run;
}
