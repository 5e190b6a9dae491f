/**
 * The run-scoped bearer (`Authorization: Bearer <EVAL_RUN_TOKEN>`) of the eval VM's routes: a
 * capability token of the run (crypto/capability-scopes.ts), only its sha256 stored. The
 * routes' `bearer` check (`runBearer`) resolves it to the run, before the body is read, after
 * lazy expiry: a cancelled, expired or failed run's token still verifies cryptographically, and
 * only the state revokes it (410). A handler that writes locks the run (`lockRun`), which judges
 * the state again: the run may have moved since its bearer was checked.
 */
import { type BearerCheck, HttpError, type TransactionSql } from "@platform/challenge-sdk";
import { readCapabilityToken } from "@platform/challenge-sdk/tokens";
import type { AgentEvalState } from "../agent-eval-state.js";
import { tokenHolder } from "../crypto/index.js";
import { reviewTransaction } from "../review/index.js";
import type { Settings } from "../settings.js";
import { type EvalRunState, RETRYABLE_EVAL_RUN_STATES } from "../state/index.js";
import type { EvalPlan } from "./eval-plan.js";

export const RUN_BEARER_CODES = {
  /** 401: no bearer, a malformed one, another run's, or a MAC or hash that does not verify. */
  invalidToken: "invalid_token",
  /** 410: the run was cancelled, expired or failed: its token opens nothing any more. */
  capabilityRevoked: "capability_revoked",
} as const;

/** The run a verified token opens, as the eval VM's routes need it. */
export interface AuthorizedRun {
  id: string;
  submission_id: string;
  review_assignment_id: string;
  state: EvalRunState;
  plan: EvalPlan;
  plan_sha256: string;
}

/**
 * The eval VM routes' `bearer`: the path's run, if the token is its live token. Refused before
 * the body is read: 401 invalid_token (malformed, another run's, a MAC or hash that does not
 * verify), 410 capability_revoked (the run was cancelled, expired or failed).
 */
export const runBearer: BearerCheck<Settings, AgentEvalState, AuthorizedRun | null> = async (
  token,
  { sql, state, pathParams },
) => {
  const runId = pathParams["eval_run_id"] ?? "";
  // A token of another run (or none at all) costs no query.
  if (readCapabilityToken(token)?.id !== runId) return null;
  return reviewTransaction(sql, undefined, async (tx) => {
    const [row] = await tx<(AuthorizedRun & { token_sha256: string })[]>`
      select id, submission_id, review_assignment_id, state, plan, plan_sha256, token_sha256
      from eval_runs where id = ${runId}`;
    const run = tokenHolder(token, state.secretKey, "evalRun", runId, row);
    if (run) judgeRun(run.id, run.state);
    return run;
  });
};

/**
 * The run `runId` locked `for update` inside `tx`, judged again (410 once revoked): what a
 * handler that writes works on after `runBearer` let the request in.
 */
export async function lockRun(tx: TransactionSql, runId: string): Promise<AuthorizedRun> {
  const [run] = await tx<AuthorizedRun[]>`
    select id, submission_id, review_assignment_id, state, plan, plan_sha256
    from eval_runs where id = ${runId} for update`;
  // Runs are never deleted: a run its bearer found and this transaction cannot is a broken database.
  if (!run) throw new Error(`eval run ${runId} vanished after its bearer was checked`);
  judgeRun(run.id, run.state);
  return run;
}

function judgeRun(id: string, state: EvalRunState): void {
  if ((RETRYABLE_EVAL_RUN_STATES as readonly string[]).includes(state)) {
    throw new HttpError(
      410,
      RUN_BEARER_CODES.capabilityRevoked,
      `The capability of eval run ${id} was revoked (${state}).`,
      { extra: { state } },
    );
  }
}
