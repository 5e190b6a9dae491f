/**
 * The eval flow's miner routes on the SDK: eval/prepare (rule 12) and eval/status. The work is
 * in prepare-eval.ts and eval-status.ts.
 */
import type { ChallengeRouter } from "@platform/challenge-sdk";
import type { AgentEvalState } from "../agent-eval-state.js";
import { OWNER_ERRORS, ownerRequest, submissionRoute } from "../route-params.js";
import type { Settings } from "../settings.js";
import {
  EvalExpectedRunRequest,
  EvalFailureRequest,
  EvalHistoryResponse,
  EvalMutationResponse,
  EvalPrepareResponse,
  EvalRevalidateResponse,
  EvalStatusQuery,
} from "./eval-schemas.js";
import { evalStatus } from "./eval-status.js";
import { prepareEval } from "./prepare-eval.js";
import { requestRevalidation } from "./revalidate.js";
import { cancelEval, failEval, retryEval } from "./run-mutations.js";

/** Register the eval routes. */
export function evalRoutes(router: ChallengeRouter<Settings, AgentEvalState>): void {
  router.signed({
    method: "POST",
    path: "/submissions/:submission_id/eval/prepare",
    summary: "The current eval run; one issued after a launch and a verified allow (rule 12)",
    description:
      "Issues one immutable run (plan v1 and its digest) when the submission has none: it " +
      "needs a launch (409 not_launched) and an allowing review that re-verifies now, at most " +
      "24 h old (409 review_not_allowed, review_stale; 503 verifier_unavailable). The answer " +
      "that issues carries the run token (secret_delivery, EVAL_RUN_TOKEN); every later " +
      "prepare answers the same plan without it.",
    ...submissionRoute("eval"),
    responses: {
      200: { description: "The current run", schema: EvalPrepareResponse },
      ...OWNER_ERRORS,
      409: { description: "not_launched, review_not_allowed, review_stale" },
      503: { description: "verifier_unavailable: nothing issued, try again (Retry-After)" },
    },
    handler: ({ sql, state, params, miner }) =>
      prepareEval(sql, {
        ...ownerRequest(params, miner),
        secretKey: state.secretKey,
        verifier: state.verifier,
        families: state.families,
      }),
  });

  router.signed({
    method: "GET",
    path: "/submissions/:submission_id/eval/status",
    summary: "The submission's eval runs, newest first (paged; cursor at most 512 characters)",
    ...submissionRoute("eval"),
    query: EvalStatusQuery,
    responses: {
      200: { description: "One page of runs", schema: EvalHistoryResponse },
      400: { description: "invalid_cursor" },
      ...OWNER_ERRORS,
    },
    handler: ({ sql, state, params, query, miner }) =>
      evalStatus(sql, {
        ...ownerRequest(params, miner),
        ...query,
        secretKey: state.secretKey,
      }),
  });

  router.signed({
    method: "POST",
    path: "/submissions/:submission_id/eval/retry",
    summary: "A fresh run after a cancelled, expired or failed one",
    description:
      "expected_run_id must be the current run (409 stale_run) and cancelled, expired or " +
      "error (409 run_not_retryable). The launch and the allow are checked again as for " +
      "prepare; at most 3 runs per allowing review, 8 per submission. The new run's token is " +
      "in this answer only.",
    ...submissionRoute("eval"),
    body: EvalExpectedRunRequest,
    responses: {
      200: { description: "The new run, with its token", schema: EvalPrepareResponse },
      ...OWNER_ERRORS,
      404: { description: "submission_not_found, run_not_found" },
      409: {
        description:
          "stale_run, run_not_retryable, run_limit_reached, review_run_limit_reached, " +
          "not_launched, review_not_allowed, review_stale",
      },
      503: { description: "verifier_unavailable: nothing issued" },
    },
    handler: ({ sql, state, params, miner, body }) =>
      retryEval(sql, {
        ...ownerRequest(params, miner),
        secretKey: state.secretKey,
        verifier: state.verifier,
        families: state.families,
        expectedRunId: body.expected_run_id,
      }),
  });

  router.signed({
    method: "POST",
    path: "/submissions/:submission_id/eval/cancel",
    summary: "Cancel the current run before any result (its token dies with it)",
    ...submissionRoute("eval"),
    body: EvalExpectedRunRequest,
    responses: {
      200: { description: "The run, cancelled", schema: EvalMutationResponse },
      ...OWNER_ERRORS,
      404: { description: "submission_not_found, run_not_found" },
      409: { description: "stale_run, invalid_transition (a result was received)" },
    },
    handler: ({ sql, params, miner, body }) =>
      cancelEval(sql, {
        ...ownerRequest(params, miner),
        expectedRunId: body.expected_run_id,
      }),
  });

  router.signed({
    method: "POST",
    path: "/submissions/:submission_id/eval/failure",
    summary: "Record why the current run failed before any result",
    description:
      "reason_code: deploy_failed, tunnel_failed, key_release_unavailable or no_result; one " +
      "record, the run becomes error (retryable).",
    ...submissionRoute("eval"),
    body: EvalFailureRequest,
    responses: {
      200: { description: "The run, failed", schema: EvalMutationResponse },
      ...OWNER_ERRORS,
      404: { description: "submission_not_found, run_not_found" },
      409: { description: "stale_run, invalid_transition (a result was received)" },
    },
    handler: ({ sql, params, miner, body }) =>
      failEval(sql, {
        ...ownerRequest(params, miner),
        expectedRunId: body.expected_run_id,
        reasonCode: body.reason_code,
        message: body.message,
      }),
  });

  router.signed({
    method: "POST",
    path: "/owner/submissions/:submission_id/revalidate",
    summary: "Owner: evaluate the same immutable artifact again (rule 23)",
    description:
      "OWNER_HOTKEY only (403 not_owner). Records a pending request: the miner's next " +
      "eval/prepare issues a new run and its token, after the allow is re-verified (its 24 h " +
      "freshness waived). The earlier accepted result keeps counting for weights until the new " +
      "one is accepted. 409 run_in_progress while a run is active, nothing_to_revalidate before " +
      "any run; a repeat answers the pending request.",
    ...submissionRoute("owner"),
    responses: {
      200: { description: "The pending revalidation", schema: EvalRevalidateResponse },
      403: { description: "not_owner" },
      404: { description: "submission_not_found" },
      409: { description: "run_in_progress, nothing_to_revalidate" },
    },
    handler: ({ sql, state, params, miner }) =>
      requestRevalidation(sql, {
        ...ownerRequest(params, miner),
        ownerHotkey: state.options.ownerHotkey,
      }),
  });
}
