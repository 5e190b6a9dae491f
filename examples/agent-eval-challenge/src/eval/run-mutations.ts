/**
 * eval/retry, eval/cancel and eval/failure (miner-signed, the submission's own hotkey), each
 * naming the run it acts on (`expected_run_id`: compare-and-swap against the submission's
 * current run, 409 stale_run otherwise).
 * - retry issues a fresh run after a cancelled, expired or failed one: the launch and a verified
 *   allow checked again exactly as for prepare (re-verified, never cached), at most 3 runs per
 *   allowing review and 8 per submission; the new run names its predecessor and its token is
 *   delivered in this answer only;
 * - cancel and failure apply only before any result (the state module's table: 409
 *   invalid_transition after), revoke the run token with the run's state, and failure records
 *   one bounded record with a reason code from a closed set.
 */
import { HttpError, type Sql, type Static, type TransactionSql } from "@platform/challenge-sdk";
import { lockOwnedSubmission, type OwnedSubmission, reviewTransaction } from "../review/index.js";
import {
  type EvalFailureCode,
  type EvalRunState,
  MAX_EVAL_RUNS_PER_SUBMISSION,
  RETRYABLE_EVAL_RUN_STATES,
  staleRun,
  transitionEvalRun,
} from "../state/index.js";
import { EVAL_ERROR_CODES } from "./eval-errors.js";
import type { EvalMutationResponse } from "./eval-schemas.js";
import { type EvalPrepareAnswer, issueRun } from "./issue-run.js";
import { type EvalPrepareRequest, requireLaunch } from "./prepare-eval.js";
import { confirmAllowUnchanged, verifyAllow } from "./verified-allow.js";

/** What cancel and failure answer (EvalMutationResponse). */
export type EvalMutationAnswer = Static<typeof EvalMutationResponse>;

interface CurrentRun {
  id: string;
  state: EvalRunState;
  run_number: number;
}

/** The named run, which must be the submission's current one. */
async function expectedCurrentRun(
  tx: TransactionSql,
  submission: OwnedSubmission,
  expectedRunId: string,
): Promise<CurrentRun> {
  const [row] = await tx<(CurrentRun & { current_eval_run_id: string | null })[]>`
    select r.id, r.state, r.run_number, s.current_eval_run_id
    from eval_runs r join submissions s on s.id = r.submission_id
    where r.id = ${expectedRunId} and r.submission_id = ${submission.id}`;
  if (!row) {
    throw new HttpError(
      404,
      EVAL_ERROR_CODES.runNotFound,
      `No eval run ${expectedRunId} for submission ${submission.id}.`,
    );
  }
  if (row.current_eval_run_id !== row.id) throw staleRun(row.id, row.current_eval_run_id);
  return { id: row.id, state: row.state, run_number: row.run_number };
}

function requireRetryable(run: CurrentRun): void {
  if (!(RETRYABLE_EVAL_RUN_STATES as readonly string[]).includes(run.state)) {
    throw new HttpError(
      409,
      EVAL_ERROR_CODES.runNotRetryable,
      `Eval run ${run.id} is ${run.state}: only a cancelled, expired or failed run is retried.`,
      { extra: { state: run.state } },
    );
  }
  if (run.run_number >= MAX_EVAL_RUNS_PER_SUBMISSION) {
    throw new HttpError(
      409,
      EVAL_ERROR_CODES.runLimitReached,
      `The submission has issued its ${MAX_EVAL_RUNS_PER_SUBMISSION} eval runs.`,
    );
  }
}

/** POST eval/retry: a fresh run after an eligible terminal one. */
export async function retryEval(
  sql: Sql,
  request: EvalPrepareRequest & { expectedRunId: string },
): Promise<EvalPrepareAnswer> {
  await reviewTransaction(sql, undefined, async (tx) => {
    const submission = await lockOwnedSubmission(tx, request.submissionId, request.hotkey);
    requireRetryable(await expectedCurrentRun(tx, submission, request.expectedRunId));
    await requireLaunch(tx, submission.id);
  });
  const allow = await verifyAllow(sql, {
    submissionId: request.submissionId,
    verifier: request.verifier,
    now: new Date(),
  });
  return reviewTransaction(sql, undefined, async (tx) => {
    const submission = await lockOwnedSubmission(tx, request.submissionId, request.hotkey);
    // Again under the lock: a concurrent retry may have issued meanwhile (then: stale_run).
    const previous = await expectedCurrentRun(tx, submission, request.expectedRunId);
    requireRetryable(previous);
    await confirmAllowUnchanged(tx, submission.id, allow);
    return issueRun(tx, {
      submission,
      allow,
      runNumber: previous.run_number + 1,
      predecessorId: previous.id,
      secretKey: request.secretKey,
      families: request.families,
    });
  });
}

/** POST eval/cancel: the current run, before any result. */
export function cancelEval(
  sql: Sql,
  request: { submissionId: string; hotkey: string; expectedRunId: string },
): Promise<EvalMutationAnswer> {
  return reviewTransaction(sql, undefined, async (tx) => {
    const submission = await lockOwnedSubmission(tx, request.submissionId, request.hotkey);
    const run = await expectedCurrentRun(tx, submission, request.expectedRunId);
    const moved = await transitionEvalRun(tx, { runId: run.id, event: "cancel", actor: "miner" });
    return { run_id: run.id, state: moved.to, failure: null };
  });
}

/** POST eval/failure: one bounded failure record of the current run, before any result. */
export function failEval(
  sql: Sql,
  request: {
    submissionId: string;
    hotkey: string;
    expectedRunId: string;
    reasonCode: EvalFailureCode;
    message: string;
  },
): Promise<EvalMutationAnswer> {
  return reviewTransaction(sql, undefined, async (tx) => {
    const submission = await lockOwnedSubmission(tx, request.submissionId, request.hotkey);
    const run = await expectedCurrentRun(tx, submission, request.expectedRunId);
    const failure = { reason_code: request.reasonCode, message: request.message };
    const moved = await transitionEvalRun(tx, {
      runId: run.id,
      event: "fail",
      actor: "miner",
      reasonCode: request.reasonCode,
      records: { failureCode: request.reasonCode, failure },
    });
    return { run_id: run.id, state: moved.to, failure };
  });
}
