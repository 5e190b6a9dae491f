/**
 * The named records of the interface (spec/agent-eval-challenge.md, "Named records"), as TypeBox
 * schemas: each route validates with them and /openapi.json publishes them under these names.
 * Part 1 of the service declares the submission records; the review and eval records join them
 * as their routes land.
 */
import { Type } from "@platform/challenge-sdk";

/** Largest agent ZIP, in bytes (1 MiB). */
export const MAX_ARTIFACT_BYTES = 1024 * 1024;
/** Its base64 length: 4 characters per 3 bytes, padded. */
export const MAX_ARTIFACT_B64_CHARS = Math.ceil(MAX_ARTIFACT_BYTES / 3) * 4;

const Sha256Hex = Type.String({ pattern: "^[0-9a-f]{64}$" });
const Timestamp = Type.String({ format: "date-time" });

/** POST /submissions: the agent as a base64 ZIP and a display name. */
export const SubmissionRequest = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 128, description: "A display name" }),
    // No maxLength: an artifact over 1 MiB is 413 artifact_too_large (a size, not a shape), and
    // a body past the route's limit is 413 before it is read.
    artifact_b64: Type.String({
      minLength: 1,
      description: "The agent: a ZIP of at most 1 MiB, base64 (standard alphabet, padded)",
    }),
  },
  { additionalProperties: false, title: "SubmissionRequest" },
);

/** The public label of a submission's state (production's names: escalated is "suspicious"). */
export const PublicStatus = Type.Union(
  [
    Type.Literal("received"),
    Type.Literal("reviewing"),
    Type.Literal("approved"),
    Type.Literal("rejected"),
    Type.Literal("suspicious"),
    Type.Literal("error"),
    Type.Literal("cancelled"),
    Type.Literal("expired"),
    Type.Literal("evaluating"),
    Type.Literal("valid"),
    Type.Literal("failed"),
    Type.Literal("invalid"),
  ],
  { title: "PublicStatus" },
);

/** The latest evaluation of a submission, when it has one. */
export const LatestEvaluation = Type.Object(
  {
    eval_run_id: Type.String(),
    status: Type.String(),
    score: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()]),
    updated_at: Timestamp,
  },
  { additionalProperties: false, title: "LatestEvaluation" },
);

/** A stored submission (create and bridge). */
export const SubmissionResponse = Type.Object(
  {
    id: Type.Integer({ minimum: 1 }),
    hotkey: Type.String(),
    name: Type.String(),
    filename: Type.String(),
    artifact_sha256: Sha256Hex,
    size: Type.Integer({ minimum: 1 }),
    version: Type.Integer({
      minimum: 1,
      description: "Its number among the hotkey's submissions of the same name (1, 2, ...)",
    }),
    latest: Type.Boolean({ description: "No later submission of the hotkey has the same name" }),
    status: Type.String({ description: "The internal state" }),
    effective_status: PublicStatus,
    created_at: Timestamp,
    updated_at: Timestamp,
    latest_evaluation: Type.Union([LatestEvaluation, Type.Null()]),
  },
  { additionalProperties: false, title: "SubmissionResponse" },
);

/** One row of GET /submissions: recent submissions, each with its latest score. */
export const SubmissionListItem = Type.Object(
  {
    id: Type.Integer({ minimum: 1 }),
    hotkey: Type.String(),
    name: Type.String(),
    artifact_sha256: Sha256Hex,
    status: Type.String(),
    effective_status: PublicStatus,
    latest_score: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()]),
    created_at: Timestamp,
  },
  { additionalProperties: false, title: "SubmissionListItem" },
);

/** GET /submissions query. */
export const SubmissionListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    hotkey: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  },
  { additionalProperties: false },
);

/** A 429 of the submission window: when the hotkey may submit again. */
export const RateLimitedResponse = Type.Object(
  {
    detail: Type.String(),
    code: Type.Literal("submission_rate_limited"),
    next_allowed_at: Timestamp,
  },
  { title: "RateLimitedResponse" },
);

// ---------------------------------------------------------------------------------------------
// Review flow: prepare, retry, cancel, operator approvals.

/** Ids the service mints (assignments, sessions, approvals): random base64url. */
const ReviewId = Type.String({ pattern: "^[A-Za-z0-9_-]{1,64}$" });

/** The states of a review assignment (src/state/assignment-states.ts). */
export const ReviewAssignmentState = Type.Union(
  [
    Type.Literal("queued"),
    Type.Literal("deployed"),
    Type.Literal("model_call_started"),
    Type.Literal("verifying"),
    Type.Literal("allowed"),
    Type.Literal("rejected"),
    Type.Literal("escalated"),
    Type.Literal("error"),
    Type.Literal("cancelled"),
    Type.Literal("expired"),
  ],
  { title: "ReviewAssignmentState" },
);

/**
 * The immutable assignment core (review assignment v1): what the review VM reviews and what its
 * report is bound to. `assignment_digest` is the sha256 hex of its RFC 8785 canonical JSON.
 */
export const ReviewAssignmentCore = Type.Object(
  {
    schema_version: Type.Literal("review-assignment/v1"),
    assignment_id: ReviewId,
    session_id: ReviewId,
    submission_id: Type.Integer({ minimum: 1 }),
    attempt: Type.Integer({ minimum: 1, maximum: 16 }),
    artifact_sha256: Sha256Hex,
    artifact_size: Type.Integer({ minimum: 1 }),
    rules_revision_id: Sha256Hex,
    nonce: Type.String({ pattern: "^[A-Za-z0-9_-]{16,128}$" }),
    issued_at: Timestamp,
    expires_at: Timestamp,
  },
  { additionalProperties: false, title: "ReviewAssignmentCore" },
);

/** The one delivery of an assignment's token, for the review VM's encrypted environment. */
export const ReviewSecretDelivery = Type.Object(
  {
    env_key: Type.Literal("REVIEW_SESSION_TOKEN"),
    token: Type.String({ description: "The assignment-scoped bearer token; never shown again" }),
  },
  { additionalProperties: false, title: "ReviewSecretDelivery" },
);

/** review/prepare and review/retry: the current assignment, and its token on the one delivery. */
export const ReviewPrepareResponse = Type.Object(
  {
    assignment_id: ReviewId,
    session_id: ReviewId,
    state: ReviewAssignmentState,
    assignment: ReviewAssignmentCore,
    assignment_digest: Sha256Hex,
    expires_at: Timestamp,
    secret_delivery: Type.Optional(ReviewSecretDelivery),
  },
  { additionalProperties: false, title: "ReviewPrepareResponse" },
);

/** review/retry: the assignment the miner retries (compare-and-swap), and an approval if needed. */
export const ReviewRetryRequest = Type.Object(
  {
    expected_assignment_id: ReviewId,
    approval_id: Type.Optional(ReviewId),
  },
  { additionalProperties: false, title: "ReviewRetryRequest" },
);

/** review/cancel: the current assignment to cancel. */
export const ReviewCancelRequest = Type.Object(
  { assignment_id: ReviewId },
  { additionalProperties: false, title: "ReviewCancelRequest" },
);

/** review/cancel's answer. */
export const ReviewCancelResponse = Type.Object(
  { assignment_id: ReviewId, state: Type.Literal("cancelled") },
  { additionalProperties: false, title: "ReviewCancelResponse" },
);

/** An operator's one-use approval to retry after a rejected or escalated assignment. */
export const ReviewApprovalRequest = Type.Object(
  {
    assignment_id: ReviewId,
    reason: Type.String({ minLength: 1, maxLength: 1024, description: "Why, for the history" }),
  },
  { additionalProperties: false, title: "ReviewApprovalRequest" },
);

/** The approval: its id goes in the retry's `approval_id` before `expires_at` (<= 300 s). */
export const ReviewApprovalResponse = Type.Object(
  { approval_id: ReviewId, assignment_id: ReviewId, expires_at: Timestamp },
  { additionalProperties: false, title: "ReviewApprovalResponse" },
);

// ---------------------------------------------------------------------------------------------
// The review VM's routes (assignment-scoped bearer) and the miner's review/deployed.

/** GET /review/v1/assignments/{assignment_id}: the assignment core, its digest and its state. */
export const ReviewAssignmentResponse = Type.Object(
  {
    assignment_id: ReviewId,
    session_id: ReviewId,
    state: ReviewAssignmentState,
    assignment: ReviewAssignmentCore,
    assignment_digest: Sha256Hex,
    expires_at: Timestamp,
  },
  { additionalProperties: false, title: "ReviewAssignmentResponse" },
);

/** One file of the rules bundle v1. */
export const RulesBundleFile = Type.Object(
  {
    path: Type.String(),
    length: Type.Integer({ minimum: 0 }),
    sha256: Sha256Hex,
    content_b64: Type.String(),
  },
  { additionalProperties: false, title: "RulesBundleFile" },
);

/** GET /review/v1/assignments/{assignment_id}/rules: the instance's rules bundle v1. */
export const RulesBundleResponse = Type.Object(
  {
    schema_version: Type.Literal("rules-bundle/v1"),
    revision_id: Sha256Hex,
    files: Type.Array(RulesBundleFile, { maxItems: 128 }),
  },
  { title: "RulesBundleResponse" },
);

/**
 * review/deployed (rule 6): immutable deployment metadata, written once; not evidence. Bounded
 * strings: the VM id and receipt are the provider's, the digests the deployed image and compose.
 */
export const ReviewDeployedRequest = Type.Object(
  {
    assignment_id: ReviewId,
    vm_id: Type.String({ pattern: "^[A-Za-z0-9._:/-]{1,128}$" }),
    provider_receipt: Type.String({ minLength: 1, maxLength: 4096 }),
    image_digest: Type.String({ pattern: "^sha256:[0-9a-f]{64}$" }),
    compose_hash: Sha256Hex,
  },
  { additionalProperties: false, title: "ReviewDeployedRequest" },
);

/** review/deployed's answer: the assignment's state and the metadata as recorded. */
export const ReviewDeployedResponse = Type.Object(
  {
    assignment_id: ReviewId,
    state: ReviewAssignmentState,
    record: ReviewDeployedRequest,
  },
  { additionalProperties: false, title: "ReviewDeployedResponse" },
);

/** model-call-started (rule 18): the one planned model request, bound before any connection. */
export const ReviewModelCallRequest = Type.Object(
  {
    request_id: ReviewId,
    provider: Type.String({ pattern: "^[a-z0-9][a-z0-9._-]{0,63}$" }),
    model: Type.String({ pattern: "^[A-Za-z0-9._:/@+-]{1,128}$" }),
    // A DNS name (no scheme, port or path): where the one connection will go.
    endpoint_host: Type.String({
      maxLength: 253,
      pattern:
        "^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$",
    }),
    request_sha256: Sha256Hex,
  },
  { additionalProperties: false, title: "ReviewModelCallRequest" },
);

/** model-call-started's answer. */
export const ReviewModelCallResponse = Type.Object(
  {
    assignment_id: ReviewId,
    state: ReviewAssignmentState,
    record: ReviewModelCallRequest,
  },
  { additionalProperties: false, title: "ReviewModelCallResponse" },
);

/** failure (rule 19): one bounded failure record, without a report. */
export const ReviewFailureRequest = Type.Object(
  {
    reason_code: Type.String({ pattern: "^[a-z][a-z0-9_]{0,63}$" }),
    message: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false, title: "ReviewFailureRequest" },
);

/** failure's answer: the assignment is now error; its capability is revoked. */
export const ReviewFailureResponse = Type.Object(
  {
    assignment_id: ReviewId,
    state: Type.Literal("error"),
    record: ReviewFailureRequest,
  },
  { additionalProperties: false, title: "ReviewFailureResponse" },
);
