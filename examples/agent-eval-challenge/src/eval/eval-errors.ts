/**
 * The stable codes of the eval flow, beside the state module's (invalid_transition, stale_run,
 * run_expired, ...). Each names one refusal, so a miner's tool can act without parsing text.
 */
export const EVAL_ERROR_CODES = {
  /** 409: eval/prepare before the miner's launch (POST launch). */
  notLaunched: "not_launched",
  /** 409: eval/prepare without a verified allow of the review (or it no longer re-verifies). */
  reviewNotAllowed: "review_not_allowed",
  /** 409: the allowing report is older than 24 h: the owner revalidates, or the miner resubmits. */
  reviewStale: "review_stale",
  /** 404: no run with this id for this submission. */
  runNotFound: "run_not_found",
  /** 409: retry needs a cancelled, expired or failed current run. */
  runNotRetryable: "run_not_retryable",
  /** 409: the submission has issued its 8 runs. */
  runLimitReached: "run_limit_reached",
  /** 409: the allowing review has authorised its 3 runs. */
  reviewRunLimitReached: "review_run_limit_reached",
  /** 503: the quote verifier cannot re-verify the stored review now; nothing was issued. */
  verifierUnavailable: "verifier_unavailable",
} as const;
