/**
 * The per-attempt bearer of the events route: a capability token of the attempt, under its own
 * purpose key and scope (crypto/capability-scopes.ts), so it opens one attempt's log stream and
 * nothing else (not the run's routes, not another attempt's stream, not an internal route). Only
 * its sha256 is stored. Issuing is deterministic: opening the same trial again answers the same
 * token, so an eval worker that lost the answer can go on. The run's state revokes it (410), not
 * a deleted hash.
 */
import type { BearerCheck } from "@platform/challenge-sdk";
import { readCapabilityToken } from "@platform/challenge-sdk/tokens";
import type { AgentEvalState } from "../agent-eval-state.js";
import { tokenHolder } from "../crypto/index.js";
import { reviewTransaction } from "../review/index.js";
import type { Settings } from "../settings.js";
import { judgeAttemptRun } from "./attempt-events.js";

/** The attempt a verified token opens: where its lines are attributed. */
export interface AuthorizedAttempt {
  id: string;
  run_id: string;
  submission_id: string;
  task_id: string;
  trial: number;
}

/** The path of an attempt's events route (what the attempts route answers as events_path). */
export function attemptEventsPath(attemptId: string): string {
  return `/internal/v1/evaluations/${attemptId}/events`;
}

/**
 * The events route's `bearer`: the path's attempt, if the token is its live token (a token of
 * another attempt, a run token, the challenge's internal token or a review token: 401
 * invalid_internal_token), while its run may still log (else 410 capability_revoked), judged
 * after lazy expiry and before the body is read.
 */
export const attemptBearer: BearerCheck<
  Settings,
  AgentEvalState,
  AuthorizedAttempt | null
> = async (token, { sql, state, pathParams }) => {
  const attemptId = pathParams["attempt_id"] ?? "";
  if (readCapabilityToken(token)?.id !== attemptId) return null;
  return reviewTransaction(sql, undefined, async (tx) => {
    const [row] = await tx<(AuthorizedAttempt & { token_sha256: string; run_state: string })[]>`
        select a.id, a.run_id, a.submission_id, a.task_id, a.trial, a.token_sha256,
          r.state as run_state
        from eval_attempts a join eval_runs r on r.id = a.run_id
        where a.id = ${attemptId}`;
    const holder = tokenHolder(token, state.secretKey, "evalAttempt", attemptId, row);
    if (!holder) return null;
    const { run_state: runState, ...attempt } = holder;
    judgeAttemptRun(attempt.run_id, runState);
    return attempt;
  });
};
