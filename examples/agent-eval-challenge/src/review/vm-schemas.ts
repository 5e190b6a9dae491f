/**
 * The records of the review VM's routes under its assignment-scoped bearer (the assignment, the
 * rules bundle, model-call-started, failure); the report's are in review-envelope-schemas.ts.
 */
import { Type } from "@platform/challenge-sdk";
import { MintedId, NamedRecord, Sha256Hex } from "../schema-primitives.js";
import { ReviewAssignmentState, ReviewPrepareResponse } from "./review-schemas.js";
import { MAX_RULES_FILES } from "./rules-bundle.js";

const { secret_delivery: _token, ...assignmentView } = ReviewPrepareResponse.properties;

/** GET /review/v1/assignments/{assignment_id}: review/prepare's answer, never with the token. */
export const ReviewAssignmentResponse = NamedRecord("ReviewAssignmentResponse", assignmentView);

/** One file of the rules bundle v1. */
export const RulesBundleFile = NamedRecord("RulesBundleFile", {
  path: Type.String(),
  length: Type.Integer({ minimum: 0 }),
  sha256: Sha256Hex,
  content_b64: Type.String(),
});

/** GET /review/v1/assignments/{assignment_id}/rules: the instance's rules bundle v1. */
export const RulesBundleResponse = Type.Object(
  {
    schema_version: Type.Literal("rules-bundle/v1"),
    revision_id: Sha256Hex,
    files: Type.Array(RulesBundleFile, { maxItems: MAX_RULES_FILES }),
  },
  { title: "RulesBundleResponse" },
);

/** model-call-started (rule 18): the one planned model request, bound before any connection. */
export const ReviewModelCallRequest = NamedRecord("ReviewModelCallRequest", {
  request_id: MintedId,
  provider: Type.String({ pattern: "^[a-z0-9][a-z0-9._-]{0,63}$" }),
  model: Type.String({ pattern: "^[A-Za-z0-9._:/@+-]{1,128}$" }),
  // A DNS name (no scheme, port or path): where the one connection will go.
  endpoint_host: Type.String({
    maxLength: 253,
    pattern:
      "^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$",
  }),
  request_sha256: Sha256Hex,
});

/** model-call-started's answer. */
export const ReviewModelCallResponse = NamedRecord("ReviewModelCallResponse", {
  assignment_id: MintedId,
  state: ReviewAssignmentState,
  record: ReviewModelCallRequest,
});

/** failure (rule 19): one bounded failure record, without a report. */
export const ReviewFailureRequest = NamedRecord("ReviewFailureRequest", {
  reason_code: Type.String({ pattern: "^[a-z][a-z0-9_]{0,63}$" }),
  message: Type.String({ minLength: 1, maxLength: 1024 }),
});

/** failure's answer: the assignment is now error; its capability is revoked. */
export const ReviewFailureResponse = NamedRecord("ReviewFailureResponse", {
  assignment_id: MintedId,
  state: Type.Literal("error"),
  record: ReviewFailureRequest,
});

/** The records /openapi.json names, in its order (challenge.ts lists each feature's). */
export const REVIEW_VM_RECORDS = {
  ReviewAssignmentResponse,
  RulesBundleResponse,
  ReviewModelCallRequest,
  ReviewModelCallResponse,
  ReviewFailureRequest,
  ReviewFailureResponse,
};
