/**
 * The review issue flow: the rules bundle v1, and prepare, retry, cancel and operator approvals
 * (routes and the transactional operations behind them).
 */

export { lockOwnedSubmission, type OwnedSubmission } from "./_owned-submission.js";
export { reviewTransaction } from "./_review-transaction.js";
export type { ReviewAssignmentCore } from "./issue-assignment.js";
export { createOperatorApproval } from "./operator-approval.js";
export { prepareReview } from "./prepare-review.js";
export { reviewRoutes } from "./review-routes.js";
export {
  loadRulesBundle,
  MAX_RULES_BYTES,
  MAX_RULES_FILES,
  type RulesBundle,
} from "./rules-bundle.js";
