/**
 * What the rest of the challenge (and the review tests) use of the review flow: its routes, the
 * rules bundle v1, prepare and operator approvals, the owned-submission lock and the review
 * transaction the eval flow runs in too.
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
