/**
 * POST /submissions/{id}/eval/prepare (rule 12): the current run's plan, or, when the submission
 * has none, one immutable run issued after a launch and a verified allow, its token delivered in
 * this answer only (`secret_delivery: {env_key: "EVAL_RUN_TOKEN", token}`); a repeated prepare
 * answers the same plan without it. Three steps: a transaction that answers the current run or
 * checks the launch; the allow re-verified outside any transaction; a transaction that issues,
 * after checking nobody issued meanwhile and the allowing receipt is unchanged. Every step holds
 * the submission row, so concurrent prepares issue exactly one run.
 */
import { HttpError, type Sql, type TransactionSql } from "@platform/challenge-sdk";
import type { QuoteVerifier } from "../attestation/index.js";
import { CapabilityDomain, deriveKey, issueCapabilityToken, KeyLabel } from "../crypto/index.js";
import { lockOwnedSubmission, type OwnedSubmission, reviewTransaction } from "../review/index.js";
import {
  appendStatusEvent,
  EVAL_RUN_TTL_SECONDS,
  type EvalRunState,
  transitionSubmission,
} from "../state/index.js";
import { EVAL_ERROR_CODES } from "./eval-errors.js";
import { buildEvalPlan, DEFAULT_TRIALS, type EvalPlan, newRunId } from "./eval-plan.js";
import type { TaskSet } from "./task-set.js";
import { confirmAllowUnchanged, verifyAllow } from "./verified-allow.js";

export const EVAL_TOKEN_ENV_KEY = "EVAL_RUN_TOKEN";

export interface EvalPrepareAnswer {
  run_id: string;
  submission_id: number;
  state: EvalRunState;
  plan: EvalPlan;
  plan_digest: string;
  expires_at: string;
  secret_delivery?: { env_key: typeof EVAL_TOKEN_ENV_KEY; token: string };
}

export interface EvalPrepareRequest {
  submissionId: string;
  hotkey: string;
  secretKey: Buffer;
  verifier: QuoteVerifier;
  taskSet: TaskSet;
}

/** The submission's current run as prepare answers it (no token), or null when it has none. */
async function currentRunAnswer(
  tx: TransactionSql,
  submission: OwnedSubmission,
): Promise<EvalPrepareAnswer | null> {
  const [run] = await tx<
    { id: string; state: EvalRunState; plan: EvalPlan; plan_sha256: string; expires_at: Date }[]
  >`
    select r.id, r.state, r.plan, r.plan_sha256, r.expires_at
    from submissions s join eval_runs r on r.id = s.current_eval_run_id
    where s.id = ${submission.id}`;
  if (!run) return null;
  return {
    run_id: run.id,
    submission_id: Number(submission.id),
    state: run.state,
    plan: run.plan,
    plan_digest: run.plan_sha256,
    expires_at: run.expires_at.toISOString(),
  };
}

async function requireLaunch(tx: TransactionSql, submissionId: string): Promise<void> {
  const [launch] =
    await tx`select 1 from submission_launches where submission_id = ${submissionId}`;
  if (!launch) {
    throw new HttpError(
      409,
      EVAL_ERROR_CODES.notLaunched,
      "Launch first: POST /submissions/{id}/launch records your go-ahead and locks the env.",
    );
  }
}

export async function prepareEval(
  sql: Sql,
  request: EvalPrepareRequest,
): Promise<EvalPrepareAnswer> {
  const existing = await reviewTransaction(sql, undefined, async (tx) => {
    const submission = await lockOwnedSubmission(tx, request.submissionId, request.hotkey);
    const current = await currentRunAnswer(tx, submission);
    if (current) return current;
    await requireLaunch(tx, submission.id);
    return null;
  });
  if (existing) return existing;

  const allow = await verifyAllow(sql, {
    submissionId: request.submissionId,
    verifier: request.verifier,
    now: new Date(),
  });

  return reviewTransaction(sql, undefined, async (tx) => {
    const submission = await lockOwnedSubmission(tx, request.submissionId, request.hotkey);
    const current = await currentRunAnswer(tx, submission);
    if (current) return current; // a concurrent prepare issued it
    await confirmAllowUnchanged(tx, submission.id, allow);
    const [{ now }] = (await tx`select now() as now`) as unknown as [{ now: Date }];
    const runId = newRunId();
    const { token, sha256 } = issueCapabilityToken(
      deriveKey(request.secretKey, KeyLabel.runToken),
      CapabilityDomain.evalRun,
      runId,
    );
    const expiresAt = new Date(now.getTime() + EVAL_RUN_TTL_SECONDS * 1000);
    const { plan, digest } = buildEvalPlan({
      runId,
      submissionId: submission.id,
      runNumber: 1,
      allow,
      agentSha256: submission.artifact_sha256,
      taskSet: request.taskSet,
      trials: DEFAULT_TRIALS,
      runTokenSha256: sha256,
      issuedAt: now,
      expiresAt,
    });
    await tx`
      insert into eval_runs (
        id, submission_id, review_assignment_id, run_number, review_run_number, state, plan,
        plan_sha256, token_sha256, token_delivered_at, nonce, issued_at, expires_at)
      values (
        ${runId}, ${submission.id}, ${allow.assignmentId}, 1, 1, 'prepared',
        ${tx.json(plan as never)}, ${digest}, ${sha256}, ${now}, ${plan.nonce}, ${now},
        ${expiresAt})`;
    await tx`update submissions set current_eval_run_id = ${runId} where id = ${submission.id}`;
    await appendStatusEvent(tx, {
      submissionId: submission.id,
      machine: "eval_run",
      subjectId: runId,
      event: "issue",
      fromState: null,
      toState: "prepared",
      actor: "miner",
      reasonCode: null,
      reason: null,
      at: now,
    });
    await transitionSubmission(tx, {
      submissionId: submission.id,
      event: "eval_issue",
      actor: "miner",
      now,
    });
    return {
      run_id: runId,
      submission_id: Number(submission.id),
      state: "prepared",
      plan,
      plan_digest: digest,
      expires_at: expiresAt.toISOString(),
      secret_delivery: { env_key: EVAL_TOKEN_ENV_KEY, token },
    };
  });
}
