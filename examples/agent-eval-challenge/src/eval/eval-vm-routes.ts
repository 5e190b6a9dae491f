/**
 * The eval VM's routes under /evaluation/v1/runs/{eval_run_id}, behind the run-scoped bearer
 * (EVAL_RUN_TOKEN, run-bearer.ts): the route's `bearer` resolves it to the run before the body
 * is read (401 / 410; the telemetry session's `auth` follows on progress), and the handler gets
 * the run as `ctx.bearer`; a handler that writes locks it (`lockRun`).
 * The result route (rules 13, 14) is the only path to a score.
 */
import { type ChallengeRouter, json } from "@platform/challenge-sdk";
import type { AgentEvalState } from "../agent-eval-state.js";
import { artifactResponse } from "../review/assignment-artifact.js";
import { RunIdParams } from "../route-params.js";
import type { Settings } from "../settings.js";
import { EvalReceiptResponse, EvalResult } from "./eval-result-schemas.js";
import {
  EvalRunEnvResponse,
  EvalRunView,
  ProgressEvent,
  ProgressResponse,
  TelemetrySessionRequest,
  TelemetrySessionResponse,
} from "./eval-vm-schemas.js";
import { releaseInstanceSeed } from "./instance-seed-release.js";
import { InstanceSeedRequest, InstanceSeedResponse } from "./instance-seed-schemas.js";
import { MAX_PROGRESS_BYTES, recordProgress } from "./progress.js";
import { canonicalResultBody, MAX_EVAL_RESULT_BYTES, receiveResult } from "./receive-result.js";
import { runBearer } from "./run-bearer.js";
import { runEnv, runView } from "./run-reads.js";
import { telemetrySessionAuth } from "./telemetry-auth.js";
import { openTelemetrySession } from "./telemetry-session.js";

/** What every route here shares: the run in the path, opened by its token. */
const RUN_ROUTE = { tags: ["eval-vm"], params: RunIdParams, bearer: runBearer };

const RUN_TOKEN_REFUSALS = {
  401: { description: "invalid_token" },
  410: { description: "capability_revoked: the run was cancelled, expired or failed" },
} as const;

/** Register the eval VM's routes. */
export function evalVmRoutes(router: ChallengeRouter<Settings, AgentEvalState>): void {
  router.public({
    method: "GET",
    path: "/evaluation/v1/runs/:eval_run_id",
    summary: "The run and its immutable plan, as the eval VM reads them",
    ...RUN_ROUTE,
    responses: {
      200: { description: "The run", schema: EvalRunView },
      ...RUN_TOKEN_REFUSALS,
    },
    handler: ({ bearer: run }) => json(runView(run)),
  });

  router.public({
    method: "GET",
    path: "/evaluation/v1/runs/:eval_run_id/artifact",
    summary: "The agent's exact ZIP, re-hashed against the plan's agent_sha256",
    ...RUN_ROUTE,
    responses: {
      200: { description: "The ZIP bytes (X-Artifact-Sha256)", contentType: "application/zip" },
      ...RUN_TOKEN_REFUSALS,
      500: { description: "artifact_integrity_failure: the stored bytes do not match" },
    },
    handler: ({ sql, bearer: run, log }) =>
      artifactResponse(
        sql,
        {
          submissionId: run.submission_id,
          expectedSha256: run.plan.agent_sha256,
          holder: `eval run ${run.id}`,
        },
        log,
      ),
  });

  router.public({
    method: "GET",
    path: "/evaluation/v1/runs/:eval_run_id/env",
    summary: "The miner's env values: the key release to the run's VM, before its result",
    description:
      "The only place the sealed values are opened. Refused once the run has a result " +
      "(409 run_not_running).",
    ...RUN_ROUTE,
    responses: {
      200: { description: "The values ({} for a confirmed-empty env)", schema: EvalRunEnvResponse },
      ...RUN_TOKEN_REFUSALS,
      409: { description: "run_not_running" },
    },
    handler: async ({ sql, state, bearer: run }) =>
      json(await runEnv(sql, { runId: run.id, secretKey: state.secretKey })),
  });

  router.public({
    method: "POST",
    path: "/evaluation/v1/runs/:eval_run_id/instance-seed",
    summary: "The run's instance seed, sealed to the attested evaluator's key",
    description:
      "The run token plus {public_key (X25519), report_data_hex, attestation}: the quote must " +
      "bind sha256(domain, plan digest, run id, plan nonce, public key) and verify as a " +
      "result's does. The answer is the seed (and the operator's family files) sealed to the " +
      "key: only the quoting TD opens it. Before the run's result only (409 run_not_running).",
    ...RUN_ROUTE,
    body: InstanceSeedRequest,
    bodyLimit: 256 * 1024,
    responses: {
      200: { description: "The sealed release", schema: InstanceSeedResponse },
      ...RUN_TOKEN_REFUSALS,
      403: { description: "report_data_binding_mismatch, attestation_rejected" },
      409: { description: "run_not_running" },
      503: { description: "verifier_unavailable: nothing released (Retry-After)" },
    },
    handler: async ({ sql, state, bearer: run, body, log }) =>
      json(
        await releaseInstanceSeed(sql, {
          runId: run.id,
          request: body,
          secretKey: state.secretKey,
          verifier: state.verifier,
          families: state.families,
          log,
        }),
      ),
  });

  router.public({
    method: "POST",
    path: "/evaluation/v1/runs/:eval_run_id/telemetry-session",
    summary: "Open a telemetry session with a grant the submission's hotkey signed",
    description:
      "The run token plus {hotkey_ss58, signature, nonce, timestamp}: an sr25519 signature by " +
      "the submission's hotkey over the domain-tagged grant naming the run and its plan digest " +
      "(docs/challenges/agent-eval.md). Timestamp within 300 s, nonce single-use per hotkey; " +
      "the session (1 h) is stored hashed. The first session starts the run.",
    ...RUN_ROUTE,
    body: TelemetrySessionRequest,
    bodyLimit: 4096,
    responses: {
      200: {
        description: "The session id (once) and its expiry",
        schema: TelemetrySessionResponse,
      },
      401: { description: "invalid_token, timestamp_out_of_window, invalid_signature" },
      403: { description: "hotkey_mismatch" },
      409: { description: "nonce_reused, run_not_running" },
      410: RUN_TOKEN_REFUSALS[410],
    },
    handler: async ({ sql, state, bearer: run, body }) =>
      json(
        await openTelemetrySession(sql, { runId: run.id, grant: body, secretKey: state.secretKey }),
      ),
  });

  router.public({
    method: "POST",
    path: "/evaluation/v1/runs/:eval_run_id/progress",
    summary: "One task.status or task.progress event: never a score (rules 14, 15)",
    description:
      "Needs X-Telemetry-Session. Per-task increasing seq; an identical repeat is recorded " +
      "once; score-shaped or unknown fields are a 422. Feeds the live views only.",
    ...RUN_ROUTE,
    auth: telemetrySessionAuth,
    body: ProgressEvent,
    bodyLimit: MAX_PROGRESS_BYTES,
    responses: {
      200: { description: "Recorded, or an identical repeat", schema: ProgressResponse },
      401: { description: "invalid_token, invalid_telemetry_session" },
      409: {
        description:
          "seq_conflict, seq_not_increasing, unknown_task, unknown_trial, run_not_running",
      },
      410: RUN_TOKEN_REFUSALS[410],
    },
    handler: async ({ sql, state, bearer: run, body }) =>
      json(await recordProgress(sql, { runId: run.id, event: body, secretKey: state.secretKey })),
  });

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
    ...RUN_ROUTE,
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
    handler: async ({ sql, state, bearer: run, body, rawBody, log }) => {
      canonicalResultBody(rawBody!);
      const answer = await receiveResult(sql, {
        runId: run.id,
        result: body,
        bytes: rawBody!,
        verifier: state.verifier,
        log,
      });
      return json(answer.receipt, { status: answer.status });
    },
  });
}
