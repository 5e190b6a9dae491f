/**
 * The agent-eval challenge's three state machines (submission, review assignment, eval run) as
 * data, and the transactional compare-and-swap transitions that apply them and write the
 * per-submission status history.
 */

export {
  ACTIVE_ASSIGNMENT_STATES,
  APPROVAL_RETRYABLE_ASSIGNMENT_STATES,
  ASSIGNMENT_EVENTS,
  ASSIGNMENT_STATES,
  ASSIGNMENT_TRANSITIONS,
  ASSIGNMENT_TTL_SECONDS,
  type AssignmentEvent,
  type AssignmentState,
  assignmentNonceState,
  DECIDED_ASSIGNMENT_STATES,
  FREELY_RETRYABLE_ASSIGNMENT_STATES,
  MAX_ASSIGNMENT_ATTEMPTS,
  SUBMISSION_EVENT_OF_ASSIGNMENT_EVENT,
} from "./assignment-states.js";
export {
  ACTIVE_EVAL_RUN_STATES,
  EVAL_FAILURE_CODES,
  EVAL_RUN_EVENTS,
  EVAL_RUN_STATES,
  EVAL_RUN_TRANSITIONS,
  EVAL_RUN_TTL_SECONDS,
  type EvalFailureCode,
  type EvalRunEvent,
  type EvalRunState,
  MAX_EVAL_RUNS_PER_REVIEW,
  MAX_EVAL_RUNS_PER_SUBMISSION,
  PRE_RESULT_EVAL_RUN_STATES,
  RETRYABLE_EVAL_RUN_STATES,
  SUBMISSION_EVENT_OF_EVAL_RUN_EVENT,
} from "./eval-run-states.js";
export { expireStale } from "./expire-stale.js";
export { appendStatusEvent, recordSubmissionReceived } from "./status-events.js";
export {
  isSubmissionState,
  PUBLIC_SUBMISSION_STATUSES,
  type PublicSubmissionStatus,
  publicSubmissionStatus,
  REVALIDATABLE_SUBMISSION_STATES,
  SUBMISSION_EVENTS,
  SUBMISSION_STATES,
  SUBMISSION_TRANSITIONS,
  type SubmissionState,
} from "./submission-states.js";
export {
  type AssignmentRecords,
  type EvalRunRecords,
  transitionAssignment,
  transitionEvalRun,
  transitionSubmission,
} from "./transition.js";
export {
  notFound,
  staleAssignment,
  staleRun,
  TRANSITION_ERROR_CODES,
} from "./transition-errors.js";
export { nextState } from "./transition-table.js";
