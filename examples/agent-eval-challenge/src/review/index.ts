/**
 * The review issue flow: the rules bundle v1, and prepare, retry, cancel and operator approvals
 * (routes and the transactional operations behind them).
 */

export { lockOwnedSubmission, type OwnedSubmission } from "./_owned-submission.js";
export { reviewTransaction } from "./_review-transaction.js";
export { type CancelRequest, cancelReview } from "./cancel-review.js";
export {
  type IssuedAssignment,
  REVIEW_ASSIGNMENT_SCHEMA_VERSION,
  type ReviewAssignmentCore,
} from "./issue-assignment.js";
export {
  APPROVAL_TTL_SECONDS,
  type ApprovalRequest,
  createOperatorApproval,
} from "./operator-approval.js";
export { prepareReview, type ReviewRequest } from "./prepare-review.js";
export { type RetryRequest, retryReview } from "./retry-review.js";
export { REVIEW_TOKEN_ENV_KEY, type ReviewPrepareAnswer } from "./review-answer.js";
export { REVIEW_ERROR_CODES } from "./review-errors.js";
export { reviewRoutes } from "./review-routes.js";
export {
  loadRulesBundle,
  MAX_RULES_BYTES,
  MAX_RULES_FILES,
  RULES_BUNDLE_SCHEMA_VERSION,
  type RulesBundle,
  type RulesBundleLimits,
  type RulesFile,
} from "./rules-bundle.js";
