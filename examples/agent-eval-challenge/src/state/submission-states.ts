import { rowsFrom, type TransitionTable } from "./transition-table.js";

/**
 * The lifecycle of a submission. Upload verification and the rate-limit reservation happen inside
 * the transaction that inserts the row, so they are not states: a stored submission is
 * `received`. The review states follow the session's current assignment; the eval states follow
 * the submission's current run. migrations/0001's check on `submissions.state` mirrors this
 * list: a migration is history, so a new state here needs a new migration there.
 */
export const SUBMISSION_STATES = [
  "received",
  "review_queued",
  "review_running",
  "review_verifying",
  "review_allowed",
  "review_rejected",
  "review_escalated",
  "review_error",
  "review_cancelled",
  "review_expired",
  "eval_running",
  "completed",
  "eval_failed",
  "eval_rejected",
] as const;
export type SubmissionState = (typeof SUBMISSION_STATES)[number];

export const SUBMISSION_EVENTS = [
  "review_issue",
  "review_deploy",
  "review_report",
  "review_allow",
  "review_reject",
  "review_escalate",
  "review_fail",
  "review_cancel",
  "review_expire",
  "eval_issue",
  "eval_revalidate",
  "eval_accept",
  "eval_reject",
  "eval_fail",
] as const;
export type SubmissionEvent = (typeof SUBMISSION_EVENTS)[number];

/**
 * Review outcomes after which a new assignment may be issued. Which of them needs an operator
 * approval (rejected, escalated) is the assignment machine's rule; the submission only allows
 * the move. `review_allowed` is absent: an allowed review is never retried.
 */
const REVIEW_RETRYABLE: readonly SubmissionState[] = [
  "review_error",
  "review_cancelled",
  "review_expired",
  "review_rejected",
  "review_escalated",
];

/**
 * Finished evaluations the owner's revalidate (rule 23) may run again: the transition table
 * allows the move and prepare picks its event from this list.
 */
export const REVALIDATABLE_SUBMISSION_STATES = [
  "completed",
  "eval_rejected",
] as const satisfies readonly SubmissionState[];

export const SUBMISSION_TRANSITIONS: TransitionTable<SubmissionState, SubmissionEvent> = [
  ...rowsFrom(["received", ...REVIEW_RETRYABLE], "review_issue", "review_queued"),
  { from: "review_queued", event: "review_deploy", to: "review_running" },
  { from: "review_running", event: "review_report", to: "review_verifying" },
  { from: "review_verifying", event: "review_allow", to: "review_allowed" },
  { from: "review_verifying", event: "review_reject", to: "review_rejected" },
  { from: "review_verifying", event: "review_escalate", to: "review_escalated" },
  // A failure is recorded without a report, so only before verifying.
  ...rowsFrom(["review_queued", "review_running"], "review_fail", "review_error"),
  ...rowsFrom(["review_queued", "review_running"], "review_cancel", "review_cancelled"),
  ...rowsFrom(
    ["review_queued", "review_running", "review_verifying"],
    "review_expire",
    "review_expired",
  ),
  // A retry after a cancelled, expired or failed run re-enters eval_running (bounded per run).
  ...rowsFrom(["review_allowed", "eval_failed"], "eval_issue", "eval_running"),
  { from: "eval_running", event: "eval_accept", to: "completed" },
  // A run whose result was refused: terminal, never retried.
  { from: "eval_running", event: "eval_reject", to: "eval_rejected" },
  { from: "eval_running", event: "eval_fail", to: "eval_failed" },
  // The owner's revalidate (rule 23): a finished evaluation runs again on the same immutable
  // artifact. Its own event, so nothing a miner calls can restart a final submission.
  ...rowsFrom(REVALIDATABLE_SUBMISSION_STATES, "eval_revalidate", "eval_running"),
];

/** The labels miners and the public list see (the API's `PublicStatus`); internal states stay internal. */
export const PUBLIC_SUBMISSION_STATUSES = [
  "received",
  "reviewing",
  "approved",
  "rejected",
  "suspicious",
  "error",
  "cancelled",
  "expired",
  "evaluating",
  "valid",
  "failed",
  "invalid",
] as const;
export type PublicSubmissionStatus = (typeof PUBLIC_SUBMISSION_STATUSES)[number];

const PUBLIC_STATUS: Readonly<Record<SubmissionState, PublicSubmissionStatus>> = {
  received: "received",
  review_queued: "reviewing",
  review_running: "reviewing",
  review_verifying: "reviewing",
  review_allowed: "approved",
  review_rejected: "rejected",
  review_escalated: "suspicious",
  review_error: "error",
  review_cancelled: "cancelled",
  review_expired: "expired",
  eval_running: "evaluating",
  completed: "valid",
  eval_failed: "failed",
  eval_rejected: "invalid",
};

/** The one mapping from internal state to public label (escalated -> "suspicious", ...). */
export function publicSubmissionStatus(state: SubmissionState): PublicSubmissionStatus {
  return PUBLIC_STATUS[state];
}

export function isSubmissionState(value: string): value is SubmissionState {
  return (SUBMISSION_STATES as readonly string[]).includes(value);
}
