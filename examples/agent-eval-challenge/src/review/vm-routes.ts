/**
 * The routes the review VM calls, under /review/v1/assignments/{assignment_id}, each behind the
 * assignment-scoped bearer (REVIEW_SESSION_TOKEN, assignment-bearer.ts). The route's `bearer`
 * resolves the token to the path's assignment before the body is read (an anonymous caller gets
 * 401, never a 422 listing the schema; a revoked write 410), and the handler gets the
 * assignment as `ctx.bearer`.
 */
import { type ChallengeRouter, json, Type } from "@platform/challenge-sdk";
import type { AgentEvalState } from "../agent-eval-state.js";
import { AssignmentIdParams } from "../route-params.js";
import type { Settings } from "../settings.js";
import { artifactResponse } from "./assignment-artifact.js";
import { assignmentBearer } from "./assignment-bearer.js";
import { MAX_REVIEW_ENVELOPE_BYTES, receiveReport } from "./receive-report.js";
import { ReviewEnvelope, ReviewReportReceiptResponse } from "./review-envelope-schemas.js";
import {
  ReviewAssignmentResponse,
  ReviewFailureRequest,
  ReviewFailureResponse,
  ReviewModelCallRequest,
  ReviewModelCallResponse,
  RulesBundleResponse,
} from "./vm-schemas.js";
import { recordFailure, startModelCall } from "./vm-writes.js";

const READ_REFUSALS = {
  401: {
    description:
      "invalid_token: missing, malformed, another assignment's, not verifying, or the assignment is no longer active",
  },
};
const WRITE_REFUSALS = {
  401: { description: "invalid_token: missing, malformed, another assignment's, not verifying" },
  410: { description: "capability_revoked: the assignment was cancelled, expired or failed" },
};

/** Register the review VM's routes. */
export function reviewVmRoutes(router: ChallengeRouter<Settings, AgentEvalState>): void {
  // Every route here names its assignment in the path, opened by its token to read or to write.
  const reading = {
    tags: ["review-vm"],
    params: AssignmentIdParams,
    bearer: assignmentBearer("read"),
  };
  const writing = { ...reading, bearer: assignmentBearer("write") };

  router.public({
    method: "GET",
    path: "/review/v1/assignments/:assignment_id",
    summary: "The assignment core, its digest and its state (assignment bearer)",
    ...reading,
    responses: {
      200: { description: "The assignment", schema: ReviewAssignmentResponse },
      ...READ_REFUSALS,
    },
    handler: ({ bearer: assignment }) => ({
      assignment_id: assignment.id,
      session_id: assignment.session_id,
      state: assignment.state,
      assignment: assignment.core,
      assignment_digest: assignment.core_sha256,
      expires_at: assignment.expires_at.toISOString(),
    }),
  });

  router.public({
    method: "GET",
    path: "/review/v1/assignments/:assignment_id/artifact",
    summary: "The exact stored ZIP bytes, re-hashed before serving (rule 17)",
    description:
      "The bytes are hashed again and compared with the assignment's artifact_sha256; a " +
      "mismatch is a 500 artifact_integrity_failure and no byte is served.",
    ...reading,
    responses: {
      200: {
        description: "The agent ZIP (header X-Artifact-Sha256: its sha256)",
        contentType: "application/zip",
        schema: Type.String({ format: "binary" }),
      },
      ...READ_REFUSALS,
      500: { description: "artifact_integrity_failure: the stored bytes do not match" },
    },
    handler: ({ sql, bearer: assignment, log }) =>
      artifactResponse(
        sql,
        {
          submissionId: assignment.submission_id,
          expectedSha256: assignment.core.artifact_sha256,
          holder: "an assignment",
        },
        log,
      ),
  });

  router.public({
    method: "GET",
    path: "/review/v1/assignments/:assignment_id/rules",
    summary: "The rules bundle v1 the assignment is reviewed under",
    ...reading,
    responses: {
      200: { description: "The rules bundle v1", schema: RulesBundleResponse },
      ...READ_REFUSALS,
    },
    handler: ({ state }) => state.rulesBundle,
  });

  router.public({
    method: "POST",
    path: "/review/v1/assignments/:assignment_id/model-call-started",
    summary: "Bind the one planned model request before connecting (rule 18)",
    description:
      "Write-once: an identical repeat answers 200 with the bound request, a different one 409 " +
      "model_call_conflict. Before review/deployed: 409 invalid_transition.",
    ...writing,
    body: ReviewModelCallRequest,
    responses: {
      200: { description: "The bound request", schema: ReviewModelCallResponse },
      ...WRITE_REFUSALS,
      409: {
        description:
          "model_call_conflict, invalid_transition, stale_assignment, transition_conflict",
      },
    },
    handler: ({ sql, bearer: assignment, body }) => startModelCall(sql, { assignment, call: body }),
  });

  router.public({
    method: "POST",
    path: "/review/v1/assignments/:assignment_id/failure",
    summary: "One bounded failure without a report; revokes the capability (rule 19)",
    ...writing,
    body: ReviewFailureRequest,
    responses: {
      200: { description: "Recorded; the assignment is error", schema: ReviewFailureResponse },
      ...WRITE_REFUSALS,
      409: { description: "invalid_transition (a report was received), stale_assignment" },
    },
    handler: ({ sql, bearer: assignment, body }) =>
      recordFailure(sql, { assignment, failure: body }),
  });

  router.public({
    method: "POST",
    path: "/review/v1/assignments/:assignment_id/report",
    summary: "Receipt and verify one immutable, quote-bound review envelope v1 (rule 20)",
    description:
      "Verified in order: schema, digests, binding of report_data to (assignment digest, " +
      "session, nonce, times), time order, the quote (signature chain, report_data, " +
      "measurement allow-list), the event log and the claimed measurement. A failed check " +
      "rejects the assignment and consumes its nonce; 'verifier unavailable' decides nothing " +
      "(503, the nonce kept: post the same envelope again). First receipt 202, identical " +
      "replay 200, a different envelope 409 report_conflict.",
    ...writing,
    body: ReviewEnvelope,
    bodyLimit: MAX_REVIEW_ENVELOPE_BYTES,
    responses: {
      200: { description: "An identical replay: the outcome", schema: ReviewReportReceiptResponse },
      202: { description: "First receipt: the outcome", schema: ReviewReportReceiptResponse },
      ...WRITE_REFUSALS,
      409: {
        description:
          "report_conflict (another envelope was received), invalid_transition (before " +
          "model-call-started), stale_assignment",
      },
      503: { description: "verifier_unavailable: nothing decided, the nonce kept (Retry-After)" },
    },
    handler: async ({ sql, state, bearer: assignment, body, log }) => {
      const answer = await receiveReport(sql, {
        assignment,
        envelope: body,
        secretKey: state.secretKey,
        verifier: state.verifier,
        log,
      });
      return json(answer.receipt, { status: answer.status });
    },
  });
}
