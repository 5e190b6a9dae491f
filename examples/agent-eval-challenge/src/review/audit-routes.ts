/**
 * The review reads on the SDK: GET review/history (rule 7, the owning miner), GET review/report
 * (rule 8, any signed caller, canonical bytes), GET /internal/v1/reviews/{session}/report
 * (rule 9) and the evidence objects (rule 11), both behind the challenge token. The work is in
 * review-audit.ts and review-evidence.ts.
 */
import { type ChallengeRouter, json, Type } from "@platform/challenge-sdk";
import type { AgentEvalState } from "../agent-eval-state.js";
import { canonicalJson, sha256Hex } from "../crypto/index.js";
import { ownerRequest, SessionIdParams, submissionRoute } from "../route-params.js";
import type { Settings } from "../settings.js";
import { ReviewAuditQuery, ReviewAuditResponse } from "./audit-schemas.js";
import { reviewAudit } from "./review-audit.js";
import { serveEvidence } from "./review-evidence.js";

const EvidenceParams = Type.Object({
  session_id: Type.String({ pattern: "^[A-Za-z0-9_-]{1,64}$" }),
  object_ref: Type.String({ pattern: "^[A-Za-z0-9_-]{1,64}\\.[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$" }),
});

const PAGE_ERRORS = {
  400: { description: "invalid_cursor: the cursor was not issued by this list (or was altered)" },
  404: { description: "submission_not_found" },
};

/** Register the review reads. */
export function reviewAuditRoutes(router: ChallengeRouter<Settings, AgentEvalState>): void {
  router.signed({
    method: "GET",
    path: "/submissions/:submission_id/review/history",
    summary: "The owner's retained assignment history, newest first (rule 7)",
    description:
      "Every attempt's state, times, digests and outcome code; never a token, nonce, evidence " +
      "or model request. Paged: limit 1-16 (default 10), next_cursor to go on.",
    ...submissionRoute("review"),
    query: ReviewAuditQuery,
    responses: {
      200: { description: "One page of the history", schema: ReviewAuditResponse },
      ...PAGE_ERRORS,
      403: { description: "not_submission_owner" },
    },
    handler: ({ sql, state, params, query, miner }) =>
      reviewAudit(sql, {
        target: { view: "history", ...ownerRequest(params, miner) },
        ...query,
        secretKey: state.secretKey,
      }),
  });

  router.signed({
    method: "GET",
    path: "/submissions/:submission_id/review/report",
    summary: "The deterministic redacted public audit projection (rule 8)",
    description:
      "The reported attempts: verdict, outcome, verifier, measurement, digests, finding check " +
      "ids and severities, evidence refs; no message, path, summary or nonce. The body is RFC " +
      "8785 canonical JSON: the same records give the same bytes (ETag: their sha256).",
    ...submissionRoute("review"),
    query: ReviewAuditQuery,
    responses: {
      200: { description: "One page of the projection", schema: ReviewAuditResponse },
      ...PAGE_ERRORS,
    },
    handler: async ({ sql, state, params, query }) => {
      const page = await reviewAudit(sql, {
        target: { view: "public_report", submissionId: String(params.submission_id) },
        ...query,
        secretKey: state.secretKey,
      });
      // Canonical JSON: the same records always give the same bytes (and the same ETag).
      const bytes = canonicalJson(page);
      return new Response(bytes, {
        headers: {
          "content-type": "application/json",
          etag: `"${sha256Hex(bytes)}"`,
        },
      });
    },
  });

  router.internal({
    method: "GET",
    path: "/internal/v1/reviews/:session_id/report",
    summary: "The immutable internal audit bundle of a review session (rule 9)",
    description:
      "Every attempt's full records: core, deployment, model call, failure, stored envelope, " +
      "verification and evidence refs, with bundle_sha256 (the canonical items' sha256).",
    tags: ["review"],
    params: SessionIdParams,
    query: ReviewAuditQuery,
    responses: {
      200: { description: "One page of the bundle", schema: ReviewAuditResponse },
      400: PAGE_ERRORS[400],
      404: { description: "review_session_not_found" },
    },
    handler: ({ sql, state, params, query }) =>
      reviewAudit(sql, {
        target: { view: "internal_report", sessionId: params.session_id },
        ...query,
        secretKey: state.secretKey,
      }).then((page) => json(page)),
  });

  router.internal({
    method: "GET",
    path: "/internal/v1/reviews/:session_id/evidence/:object_ref",
    summary: "One exact evidence object, or one byte range of it (rule 11)",
    description:
      "The bytes the review VM attached, opened from their sealed box (X-Evidence-Sha256 is " +
      "what the envelope's core commits to). One Range (bytes=first-last, first-, -suffix) " +
      "answers 206 with Content-Range; several ranges, a malformed one or one past the end 416.",
    tags: ["review"],
    params: EvidenceParams,
    responses: {
      200: {
        description: "The object",
        contentType: "application/octet-stream",
        schema: Type.String({ format: "binary" }),
      },
      206: {
        description: "The requested range",
        contentType: "application/octet-stream",
        schema: Type.String({ format: "binary" }),
      },
      404: { description: "review_session_not_found, evidence_not_found" },
      416: { description: "range_not_satisfiable (Content-Range: bytes */length)" },
      500: { description: "evidence_integrity_failure: the sealed object does not open" },
    },
    handler: ({ sql, state, params, request, log }) =>
      serveEvidence(sql, {
        sessionId: params.session_id,
        objectRef: params.object_ref,
        range: request.headers.get("range"),
        secretKey: state.secretKey,
        log,
      }),
  });
}
