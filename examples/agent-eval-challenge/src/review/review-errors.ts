import { TRANSITION_ERROR_CODES } from "../state/index.js";

/**
 * The stable codes the review flow answers with, beside the state module's (invalid_transition,
 * stale_assignment, ...). Each names one refusal, so a client can act on it without parsing text.
 */
export const REVIEW_ERROR_CODES = {
  /** 404: no submission with this id. */
  submissionNotFound: TRANSITION_ERROR_CODES.submissionNotFound,
  /** 403: the signed hotkey is not the submission's. */
  notSubmissionOwner: "not_submission_owner",
  /** 404: the submission has no review session yet (prepare first). */
  reviewSessionNotFound: "review_session_not_found",
  /** 404: no assignment with this id in this session. */
  assignmentNotFound: TRANSITION_ERROR_CODES.assignmentNotFound,
  /** 409: the current assignment is still active: cancel it (or wait) before a retry. */
  assignmentNotTerminal: "assignment_not_terminal",
  /** 409: a rejected or escalated assignment needs an unused, unexpired operator approval. */
  approvalRequired: "approval_required",
  /** 409: an allowed review is never retried. */
  reviewAlreadyAllowed: "review_already_allowed",
  /** 409: the session has issued its 16 assignments. */
  attemptLimitReached: "attempt_limit_reached",
  /** 409: approvals are granted only for a rejected or escalated assignment. */
  approvalNotApplicable: "approval_not_applicable",
  /** 409: the submission is past review (e.g. evaluating) and has no session to start. */
  reviewNotAvailable: "review_not_available",
} as const;
