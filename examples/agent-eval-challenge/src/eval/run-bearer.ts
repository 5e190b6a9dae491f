/**
 * The run-scoped bearer (`Authorization: Bearer <EVAL_RUN_TOKEN>`) of the eval VM's routes. The
 * token is `<run id>.<HMAC>`; only its sha256 is stored. Judged twice: by the route's `bearer`
 * check (`runBearer`), before the body is read, so a caller without a token of this run learns
 * nothing about the route's schema; then inside the route's transaction, after lazy expiry: a
 * cancelled, expired or failed run's token still verifies cryptographically, and only the state
 * revokes it (410 on these writes).
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
import { presentedBearer } from "../review/assignment-bearer.js";
import type { Settings } from "../settings.js";
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

/** Whether `token` is run `runId`'s and verifies against `storedHash`. */
function tokenOfRun(
  secretKey: Buffer,
  runId: string,
  token: string,
  storedHash: string | undefined,
): boolean {
  const parsed = parseCapabilityToken(token);
  const verified = checkCapabilityToken(
    deriveKey(secretKey, KeyLabel.runToken),
    CapabilityDomain.evalRun,
    token,
    storedHash ?? NO_STORED_HASH,
  );
  return parsed !== null && parsed.id === runId && storedHash !== undefined && verified;
}

/**
 * The eval VM routes' `bearer`: a token of the path's run whose MAC and stored hash verify (else
 * 401 invalid_token, before the body is read). Whether the run's state still lets it in is
 * judged by authorizeRun, in the route's transaction.
 */
export const runBearer: BearerCheck<Settings, AgentEvalState> = async (
  token,
  { sql, state, pathParams },
) => {
  const runId = pathParams["eval_run_id"] ?? "";
  if (parseCapabilityToken(token)?.id !== runId) return false;
  return tokenOfRun(state.secretKey, runId, token, await storedHash(sql, runId));
};

async function storedHash(sql: Sql, runId: string): Promise<string | undefined> {
  const [row] = await sql<{ token_sha256: string }[]>`
    select token_sha256 from eval_runs where id = ${runId}`;
  return row?.token_sha256;
}

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
  // Verified whether or not the row exists: a missing run costs the same comparisons.
  const verified = tokenOfRun(input.secretKey, input.runId, token, row?.token_sha256);
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
