/**
 * The review issue flow on the SDK: POST /submissions/{submission_id}/review/prepare, /retry and
 * /cancel (miner-signed, the submission's own hotkey only), and POST
 * /internal/v1/reviews/{session_id}/approvals (the validator, behind the challenge token). The
 * work is in prepare-review.ts, retry-review.ts, cancel-review.ts and operator-approval.ts; here
 * only the HTTP shape.
 */
import type { ChallengeRouter } from "@platform/challenge-sdk";
import type { AgentEvalState } from "../agent-eval-state.js";
import { OWNER_ERRORS, ownerRequest, SessionIdParams, submissionRoute } from "../route-params.js";
import type { Settings } from "../settings.js";
import { reviewAuditRoutes } from "./audit-routes.js";
import { cancelReview } from "./cancel-review.js";
import { createOperatorApproval } from "./operator-approval.js";
import { prepareReview } from "./prepare-review.js";
import { retryReview } from "./retry-review.js";
import {
  ReviewApprovalRequest,
  ReviewApprovalResponse,
  ReviewCancelRequest,
  ReviewCancelResponse,
  ReviewDeployedRequest,
  ReviewDeployedResponse,
  ReviewPrepareResponse,
  ReviewRetryRequest,
} from "./review-schemas.js";
import { reviewVmRoutes } from "./vm-routes.js";
import { recordDeployment } from "./vm-writes.js";

/** Register the review issue routes, review/deployed and the review VM's routes. */
export function reviewRoutes(router: ChallengeRouter<Settings, AgentEvalState>): void {
  router.signed({
    method: "POST",
    path: "/submissions/:submission_id/review/prepare",
    summary: "The current immutable review assignment; its token exactly once (rule 3)",
    description:
      "Creates the review session and its first assignment when there is none. The answer that " +
      "creates an assignment carries its token in secret_delivery (REVIEW_SESSION_TOKEN); every " +
      "later prepare answers the same assignment without it. A lost first answer is recovered " +
      "with review/cancel and review/retry, never by delivering the token again.",
    ...submissionRoute("review"),
    responses: {
      200: { description: "The current assignment", schema: ReviewPrepareResponse },
      ...OWNER_ERRORS,
      409: { description: "review_not_available: the submission is past review" },
    },
    handler: ({ sql, state, params, miner }) =>
      prepareReview(sql, {
        ...ownerRequest(params, miner),
        secretKey: state.secretKey,
        rulesRevisionId: state.rulesBundle.revision_id,
      }),
  });

  router.signed({
    method: "POST",
    path: "/submissions/:submission_id/review/retry",
    summary: "A fresh assignment after an eligible terminal one (rule 4)",
    description:
      "expected_assignment_id must be the current assignment (compare-and-swap). Cancelled, " +
      "expired and error are retried freely; rejected and escalated only with an operator " +
      "approval (approval_id, one use, 300 s); allowed never; at most 16 assignments.",
    ...submissionRoute("review"),
    body: ReviewRetryRequest,
    responses: {
      200: { description: "The new assignment, with its token", schema: ReviewPrepareResponse },
      ...OWNER_ERRORS,
      404: { description: "submission_not_found, review_session_not_found" },
      409: {
        description:
          "stale_assignment, assignment_not_terminal, approval_required, review_already_allowed, attempt_limit_reached",
      },
    },
    handler: ({ sql, state, params, miner, body }) =>
      retryReview(sql, {
        ...ownerRequest(params, miner),
        secretKey: state.secretKey,
        rulesRevisionId: state.rulesBundle.revision_id,
        expectedAssignmentId: body.expected_assignment_id,
        approvalId: body.approval_id,
      }),
  });

  router.signed({
    method: "POST",
    path: "/submissions/:submission_id/review/cancel",
    summary: "Cancel the named current assignment, revoking its capability and nonce (rule 5)",
    ...submissionRoute("review"),
    body: ReviewCancelRequest,
    responses: {
      200: { description: "Cancelled", schema: ReviewCancelResponse },
      ...OWNER_ERRORS,
      404: { description: "submission_not_found, assignment_not_found" },
      409: { description: "stale_assignment, invalid_transition" },
      410: { description: "assignment_expired" },
    },
    handler: ({ sql, params, miner, body }) =>
      cancelReview(sql, {
        ...ownerRequest(params, miner),
        assignmentId: body.assignment_id,
      }),
  });

  router.signed({
    method: "POST",
    path: "/submissions/:submission_id/review/deployed",
    summary: "Record the immutable deployment metadata of an assignment (rule 6)",
    description:
      "Write-once metadata (VM id, provider receipt, image digest, compose hash), moving the " +
      "assignment to deployed. It is not evidence: no verdict reads it. An identical repeat " +
      "answers 200 with the same record, a different one 409 deployment_conflict.",
    ...submissionRoute("review"),
    body: ReviewDeployedRequest,
    responses: {
      200: { description: "The recorded metadata", schema: ReviewDeployedResponse },
      ...OWNER_ERRORS,
      404: { description: "submission_not_found, assignment_not_found" },
      409: { description: "deployment_conflict, invalid_transition, stale_assignment" },
      410: { description: "assignment_expired" },
    },
    handler: ({ sql, params, miner, body }) =>
      recordDeployment(sql, {
        ...ownerRequest(params, miner),
        metadata: body,
      }),
  });

  router.internal({
    method: "POST",
    path: "/internal/v1/reviews/:session_id/approvals",
    summary:
      "Validator: a one-use approval to retry after a rejected or escalated attempt (rule 10)",
    tags: ["review"],
    params: SessionIdParams,
    body: ReviewApprovalRequest,
    responses: {
      200: { description: "The approval (expires within 300 s)", schema: ReviewApprovalResponse },
      404: { description: "review_session_not_found, assignment_not_found" },
      409: { description: "approval_not_applicable: the assignment is not rejected or escalated" },
    },
    handler: ({ sql, params, body }) =>
      createOperatorApproval(sql, {
        sessionId: params.session_id,
        assignmentId: body.assignment_id,
        reason: body.reason,
      }),
  });

  reviewAuditRoutes(router);
  reviewVmRoutes(router);
}
