/**
 * The stable codes of the review VM's routes and of review/deployed, beside the state module's
 * (invalid_transition, stale_assignment, assignment_expired, ...) and the flow's
 * (review-errors.ts). Each names one refusal, so the VM can act on it without parsing text.
 */
export const VM_ERROR_CODES = {
  /**
   * 401: no bearer, a malformed one, one naming another assignment, one whose MAC or stored hash
   * does not match, or (on a read) one of an assignment that is no longer active. One code for
   * all of them: a caller probing tokens learns nothing from which check failed.
   */
  invalidToken: "invalid_token",
  /** 410: a write with the token of a cancelled, expired or failed (error) assignment. */
  capabilityRevoked: "capability_revoked",
  /** 409: review/deployed with metadata other than what was recorded (it is write-once). */
  deploymentConflict: "deployment_conflict",
  /** 409: model-call-started with a request other than the one already bound (write-once). */
  modelCallConflict: "model_call_conflict",
  /** 409: the assignment already received a different report envelope (it is write-once). */
  reportConflict: "report_conflict",
  /**
   * 503: the quote verifier (its collateral) could not be reached; nothing was decided, the
   * nonce is kept, and the same envelope may be posted again (Retry-After).
   */
  verifierUnavailable: "verifier_unavailable",
  /** 500: the stored ZIP no longer hashes to its recorded sha256; no byte is served. */
  artifactIntegrityFailure: "artifact_integrity_failure",
} as const;
