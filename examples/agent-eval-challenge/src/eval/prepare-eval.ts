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
import { lockOwnedSubmission, type OwnedSubmission, reviewTransaction } from "../review/index.js";
import {
  ACTIVE_EVAL_RUN_STATES,
  type EvalRunState,
  MAX_EVAL_RUNS_PER_SUBMISSION,
  REVALIDATABLE_SUBMISSION_STATES,
} from "../state/index.js";
import { EVAL_ERROR_CODES } from "./eval-errors.js";
import type { EvalPlan } from "./eval-plan.js";
import type { FamilySet } from "./families/index.js";
import { type EvalPrepareAnswer, issueRun } from "./issue-run.js";
import { consumeRevalidation, pendingRevalidation } from "./revalidate.js";
import { confirmAllowUnchanged, verifyAllow } from "./verified-allow.js";

export interface EvalPrepareRequest {
  submissionId: string;
  hotkey: string;
  secretKey: Buffer;
  verifier: QuoteVerifier;
  families: FamilySet;
}

/** The submission's current run as prepare answers it (no token), or null when it has none. */
export async function currentRunAnswer(
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

export async function requireLaunch(tx: TransactionSql, submissionId: string): Promise<void> {
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
  const first = await reviewTransaction(sql, undefined, async (tx) => {
    const submission = await lockOwnedSubmission(tx, request.submissionId, request.hotkey);
    const current = await currentRunAnswer(tx, submission);
    if (current) {
      // A finished run is answered as it is, unless the owner asked for a revalidation.
      return (await revalidationDue(tx, submission.id, current)) ? { revalidate: true } : current;
    }
    await requireLaunch(tx, submission.id);
    return { revalidate: false };
  });
  if ("run_id" in first) return first;

  const allow = await verifyAllow(sql, {
    submissionId: request.submissionId,
    verifier: request.verifier,
    now: new Date(),
    // The owner's revalidate re-verifies the quote but waives the 24 h freshness: the artifact
    // and its review are immutable, and the owner chose to evaluate them again.
    ...(first.revalidate ? { maxAgeMs: Number.POSITIVE_INFINITY } : {}),
  });

  return reviewTransaction(sql, undefined, async (tx) => {
    const submission = await lockOwnedSubmission(tx, request.submissionId, request.hotkey);
    const current = await currentRunAnswer(tx, submission);
    if (!first.revalidate || !current) {
      if (current) return current; // a concurrent prepare issued it
      await confirmAllowUnchanged(tx, submission.id, allow);
      return issueRun(tx, {
        submission,
        allow,
        runNumber: 1,
        predecessorId: null,
        secretKey: request.secretKey,
        families: request.families,
      });
    }
    const pending = (await revalidationDue(tx, submission.id, current))
      ? await pendingRevalidation(tx, submission.id)
      : null;
    if (!pending) return current; // a concurrent prepare consumed it
    await confirmAllowUnchanged(tx, submission.id, allow);
    if (current.plan.run_number >= MAX_EVAL_RUNS_PER_SUBMISSION) {
      throw new HttpError(
        409,
        EVAL_ERROR_CODES.runLimitReached,
        `The submission has issued its ${MAX_EVAL_RUNS_PER_SUBMISSION} eval runs.`,
      );
    }
    const issued = await issueRun(tx, {
      submission,
      allow,
      runNumber: current.plan.run_number + 1,
      predecessorId: current.run_id,
      secretKey: request.secretKey,
      families: request.families,
      submissionEvent: (REVALIDATABLE_SUBMISSION_STATES as readonly string[]).includes(
        submission.state,
      )
        ? "eval_revalidate"
        : "eval_issue",
    });
    await consumeRevalidation(tx, pending.id, issued.run_id);
    return issued;
  });
}

/** Whether the current run is over and the owner asked for a new one. */
async function revalidationDue(
  tx: TransactionSql,
  submissionId: string,
  current: EvalPrepareAnswer,
): Promise<boolean> {
  if ((ACTIVE_EVAL_RUN_STATES as readonly string[]).includes(current.state)) return false;
  return (await pendingRevalidation(tx, submissionId)) !== null;
}
