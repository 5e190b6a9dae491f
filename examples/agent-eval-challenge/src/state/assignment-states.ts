import type { SubmissionEvent } from "./submission-states.js";
import { rowsFrom, type TransitionTable } from "./transition-table.js";

/**
 * The lifecycle of one immutable review assignment. The API's `ReviewAssignmentState` is built
 * from this list, and migrations/0001's check on `review_assignments.state` mirrors it: a
 * migration is history, so a new state here needs a new migration there.
 */
export const ASSIGNMENT_STATES = [
  "queued",
  "deployed",
  "model_call_started",
  "verifying",
  "allowed",
  "rejected",
  "escalated",
  "error",
  "cancelled",
  "expired",
] as const;
export type AssignmentState = (typeof ASSIGNMENT_STATES)[number];

/** States in which the assignment's capability (token) and nonce are live. */
export const ACTIVE_ASSIGNMENT_STATES = [
  "queued",
  "deployed",
  "model_call_started",
  "verifying",
] as const satisfies readonly AssignmentState[];

/**
 * The outcomes a verified (or refused) report decides: the review's `outcome` in the API, and
 * the states whose nonce is consumed.
 */
export const DECIDED_ASSIGNMENT_STATES = [
  "allowed",
  "rejected",
  "escalated",
] as const satisfies readonly AssignmentState[];

/** Terminal states a retry may follow without an approval. */
export const FREELY_RETRYABLE_ASSIGNMENT_STATES = [
  "cancelled",
  "expired",
  "error",
] as const satisfies readonly AssignmentState[];

/** Terminal states a retry may follow only with a one-use operator approval. */
export const APPROVAL_RETRYABLE_ASSIGNMENT_STATES = [
  "rejected",
  "escalated",
] as const satisfies readonly AssignmentState[];

/** At most this many assignments per review session. */
export const MAX_ASSIGNMENT_ATTEMPTS = 16;

/** Lazy expiry: an assignment lives this long from issue. */
export const ASSIGNMENT_TTL_SECONDS = 30 * 60;

export const ASSIGNMENT_EVENTS = [
  "deploy",
  "start_model_call",
  "receive_report",
  "allow",
  "reject",
  "escalate",
  "fail_verification",
  "fail",
  "cancel",
  "expire",
] as const;
export type AssignmentEvent = (typeof ASSIGNMENT_EVENTS)[number];

export const ASSIGNMENT_TRANSITIONS: TransitionTable<AssignmentState, AssignmentEvent> = [
  { from: "queued", event: "deploy", to: "deployed" },
  // The planned model request is bound before the VM opens a connection.
  { from: "deployed", event: "start_model_call", to: "model_call_started" },
  // A report is bound to the planned model call, so it follows model_call_started only.
  { from: "model_call_started", event: "receive_report", to: "verifying" },
  // Definitive verification outcomes (they consume the nonce). "Verifier unavailable" is not an
  // event: the assignment stays in verifying and keeps its nonce.
  { from: "verifying", event: "allow", to: "allowed" },
  { from: "verifying", event: "reject", to: "rejected" },
  { from: "verifying", event: "escalate", to: "escalated" },
  // An envelope that fails verification (quote, binding, measurement) is a rejection, not an
  // error: an error is freely retryable, and a forged report must not buy a free retry.
  { from: "verifying", event: "fail_verification", to: "rejected" },
  // The VM's bounded failure record: only without a report.
  ...rowsFrom(["queued", "deployed", "model_call_started"], "fail", "error"),
  // Cancel before a report only: once a report is in, cancelling would let a miner escape a
  // pending verdict (say while the verifier is unavailable).
  ...rowsFrom(["queued", "deployed", "model_call_started"], "cancel", "cancelled"),
  ...rowsFrom(ACTIVE_ASSIGNMENT_STATES, "expire", "expired"),
];

/** What each assignment event does to the submission (null: the submission does not move). */
export const SUBMISSION_EVENT_OF_ASSIGNMENT_EVENT: Readonly<
  Record<AssignmentEvent, SubmissionEvent | null>
> = {
  deploy: "review_deploy",
  start_model_call: null,
  receive_report: "review_report",
  allow: "review_allow",
  reject: "review_reject",
  escalate: "review_escalate",
  fail_verification: "review_reject",
  fail: "review_fail",
  cancel: "review_cancel",
  expire: "review_expire",
};

/** The nonce follows the state (the migration checks the same rule). */
export function assignmentNonceState(state: AssignmentState): "active" | "consumed" | "revoked" {
  if ((ACTIVE_ASSIGNMENT_STATES as readonly string[]).includes(state)) return "active";
  if ((DECIDED_ASSIGNMENT_STATES as readonly string[]).includes(state)) return "consumed";
  return "revoked";
}
