/**
 * The eval VM's routes under /evaluation/v1/runs/{eval_run_id}, behind the run-scoped bearer
 * (EVAL_RUN_TOKEN, run-bearer.ts), judged in the handler's transaction like the review VM's.
 * The result route (rules 13, 14) is the only path to a score.
 */
import { type ChallengeRouter, json } from "@platform/challenge-sdk";
import type { AgentEvalState } from "../agent-eval-state.js";
import { EvalReceiptResponse, EvalResult, MAX_EVAL_RESULT_BYTES } from "../api-schemas.js";
import { RunIdParams } from "../route-params.js";
import type { Settings } from "../settings.js";
import { canonicalResultBody, receiveResult } from "./receive-result.js";

/** Register the eval VM's routes. */
export function evalVmRoutes(router: ChallengeRouter<Settings, AgentEvalState>): void {
  router.public({
    method: "POST",
    path: "/evaluation/v1/runs/:eval_run_id/result",
    summary: "Receive the run's one result: the only path to a score (rules 13, 14)",
    description:
      "The eval result v1 as byte-exact RFC 8785 canonical JSON (400 not_canonical_json), " +
      "scoped to the run token. Checked in order: the result digest, the binding to the plan, " +
      "the scores (k trials a task, each task the mean of its trials, the job the mean over the " +
      "plan's tasks), the report_data binding (result digest, run, plan nonce), the time order, " +
      "then the quote, event log and measurement as for reviews. A failed check rejects the " +
      "run. First receipt 202, identical bytes 200, other bytes 409 result_conflict; a " +
      "verifier outage 503 (nothing decided).",
    tags: ["eval-vm"],
    params: RunIdParams,
    body: EvalResult,
    bodyLimit: MAX_EVAL_RESULT_BYTES,
    responses: {
      200: { description: "An identical replay: the outcome", schema: EvalReceiptResponse },
      202: { description: "First receipt: the outcome", schema: EvalReceiptResponse },
      400: { description: "not_canonical_json" },
      401: { description: "invalid_token" },
      409: { description: "result_conflict, invalid_transition, stale_run" },
      410: { description: "capability_revoked: the run was cancelled, expired or failed" },
      503: { description: "verifier_unavailable: nothing decided (Retry-After)" },
    },
    handler: async ({ sql, state, params, request, body, rawBody, log }) => {
      canonicalResultBody(rawBody!);
      const answer = await receiveResult(sql, {
        headers: request.headers,
        runId: params.eval_run_id,
        result: body,
        bytes: rawBody!,
        secretKey: state.secretKey,
        verifier: state.verifier,
        log,
      });
      return json(answer.receipt, { status: answer.status });
    },
  });
}
