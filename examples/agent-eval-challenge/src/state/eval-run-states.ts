import type { SubmissionEvent } from "./submission-states.js";
import { rowsFrom, type TransitionTable } from "./transition-table.js";

/**
 * The lifecycle of one immutable external Eval run. The API's `EvalRunState` is built from this
 * list, and migrations/0001's check on `eval_runs.state` mirrors it: a migration is history, so a
 * new state here needs a new migration there.
 */
export const EVAL_RUN_STATES = [
  "prepared",
  "running",
  "verifying",
  "accepted",
  "rejected",
  "cancelled",
  "expired",
  "error",
] as const;
export type EvalRunState = (typeof EVAL_RUN_STATES)[number];

/** States in which the run token is live. */
export const ACTIVE_EVAL_RUN_STATES = [
  "prepared",
  "running",
  "verifying",
] as const satisfies readonly EvalRunState[];

/** Before any result: the only states cancel and failure apply to, and that expire. */
export const PRE_RESULT_EVAL_RUN_STATES = [
  "prepared",
  "running",
] as const satisfies readonly EvalRunState[];

/** Terminal states a retry may follow. */
export const RETRYABLE_EVAL_RUN_STATES = [
  "cancelled",
  "expired",
  "error",
] as const satisfies readonly EvalRunState[];

export const MAX_EVAL_RUNS_PER_REVIEW = 3;
export const MAX_EVAL_RUNS_PER_SUBMISSION = 8;
export const EVAL_RUN_TTL_SECONDS = 6 * 60 * 60;

/**
 * The failure reason codes an eval failure may carry: `EvalFailureRequest` is built from this
 * list, and migrations/0001's check on `eval_runs.failure_code` mirrors it.
 */
export const EVAL_FAILURE_CODES = [
  "deploy_failed",
  "tunnel_failed",
  "key_release_unavailable",
  "no_result",
] as const;
export type EvalFailureCode = (typeof EVAL_FAILURE_CODES)[number];

export const EVAL_RUN_EVENTS = [
  "start",
  "receive_result",
  "accept",
  "reject",
  "cancel",
  "fail",
  "expire",
] as const;
export type EvalRunEvent = (typeof EVAL_RUN_EVENTS)[number];

export const EVAL_RUN_TRANSITIONS: TransitionTable<EvalRunState, EvalRunEvent> = [
  { from: "prepared", event: "start", to: "running" },
  // A result may arrive without any progress having been reported first.
  ...rowsFrom(PRE_RESULT_EVAL_RUN_STATES, "receive_result", "verifying"),
  { from: "verifying", event: "accept", to: "accepted" },
  { from: "verifying", event: "reject", to: "rejected" },
  ...rowsFrom(PRE_RESULT_EVAL_RUN_STATES, "cancel", "cancelled"),
  ...rowsFrom(PRE_RESULT_EVAL_RUN_STATES, "fail", "error"),
  // A received result is never thrown away by the clock: a run parked in verifying (verifier
  // down) waits, without credit, instead of expiring and losing hours of compute.
  ...rowsFrom(PRE_RESULT_EVAL_RUN_STATES, "expire", "expired"),
];

/** What each run event does to the submission (null: the submission does not move). */
export const SUBMISSION_EVENT_OF_EVAL_RUN_EVENT: Readonly<
  Record<EvalRunEvent, SubmissionEvent | null>
> = {
  start: null,
  receive_result: null,
  accept: "eval_accept",
  reject: "eval_reject",
  cancel: "eval_fail",
  fail: "eval_fail",
  expire: "eval_fail",
};
