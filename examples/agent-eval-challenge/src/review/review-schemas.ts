/**
 * The records of the miner's and the operator's review routes (prepare, retry, cancel, deployed,
 * approvals) and the assignment they share, as TypeBox schemas published by title.
 */
import { Type } from "@platform/challenge-sdk";
import { Literals, MintedId, NamedRecord, Sha256Hex, Timestamp } from "../schema-primitives.js";
import { ASSIGNMENT_STATES, MAX_ASSIGNMENT_ATTEMPTS } from "../state/index.js";

/** The states of a review assignment (src/state/assignment-states.ts). */
export const ReviewAssignmentState = Literals(ASSIGNMENT_STATES, {
  title: "ReviewAssignmentState",
});

/**
 * The immutable assignment core (review assignment v1): what the review VM reviews and what its
 * report is bound to. `assignment_digest` is the sha256 hex of its RFC 8785 canonical JSON.
 */
export const ReviewAssignmentCore = NamedRecord("ReviewAssignmentCore", {
  schema_version: Type.Literal("review-assignment/v1"),
  assignment_id: MintedId,
  session_id: MintedId,
  submission_id: Type.Integer({ minimum: 1 }),
  attempt: Type.Integer({ minimum: 1, maximum: MAX_ASSIGNMENT_ATTEMPTS }),
  artifact_sha256: Sha256Hex,
  artifact_size: Type.Integer({ minimum: 1 }),
  rules_revision_id: Sha256Hex,
  nonce: Type.String({ pattern: "^[A-Za-z0-9_-]{16,128}$" }),
  issued_at: Timestamp,
  expires_at: Timestamp,
});

/** The one delivery of an assignment's token, for the review VM's encrypted environment. */
export const ReviewSecretDelivery = NamedRecord("ReviewSecretDelivery", {
  env_key: Type.Literal("REVIEW_SESSION_TOKEN"),
  token: Type.String({ description: "The assignment-scoped bearer token; never shown again" }),
});

/** review/prepare and review/retry: the current assignment, and its token on the one delivery. */
export const ReviewPrepareResponse = NamedRecord("ReviewPrepareResponse", {
  assignment_id: MintedId,
  session_id: MintedId,
  state: ReviewAssignmentState,
  assignment: ReviewAssignmentCore,
  assignment_digest: Sha256Hex,
  expires_at: Timestamp,
  secret_delivery: Type.Optional(ReviewSecretDelivery),
});

/** review/retry: the assignment the miner retries (compare-and-swap), and an approval if needed. */
export const ReviewRetryRequest = NamedRecord("ReviewRetryRequest", {
  expected_assignment_id: MintedId,
  approval_id: Type.Optional(MintedId),
});

/** review/cancel: the current assignment to cancel. */
export const ReviewCancelRequest = NamedRecord("ReviewCancelRequest", { assignment_id: MintedId });

/** review/cancel's answer. */
export const ReviewCancelResponse = NamedRecord("ReviewCancelResponse", {
  assignment_id: MintedId,
  state: Type.Literal("cancelled"),
});

/** An operator's one-use approval to retry after a rejected or escalated assignment. */
export const ReviewApprovalRequest = NamedRecord("ReviewApprovalRequest", {
  assignment_id: MintedId,
  reason: Type.String({ minLength: 1, maxLength: 1024, description: "Why, for the history" }),
});

/** The approval: its id goes in the retry's `approval_id` before `expires_at` (<= 300 s). */
export const ReviewApprovalResponse = NamedRecord("ReviewApprovalResponse", {
  approval_id: MintedId,
  assignment_id: MintedId,
  expires_at: Timestamp,
});

/**
 * review/deployed (rule 6): immutable deployment metadata, written once; not evidence. Bounded
 * strings: the VM id and receipt are the provider's, the digests the deployed image and compose.
 */
export const ReviewDeployedRequest = NamedRecord("ReviewDeployedRequest", {
  assignment_id: MintedId,
  vm_id: Type.String({ pattern: "^[A-Za-z0-9._:/-]{1,128}$" }),
  provider_receipt: Type.String({ minLength: 1, maxLength: 4096 }),
  image_digest: Type.String({ pattern: "^sha256:[0-9a-f]{64}$" }),
  compose_hash: Sha256Hex,
});

/** review/deployed's answer: the assignment's state and the metadata as recorded. */
export const ReviewDeployedResponse = NamedRecord("ReviewDeployedResponse", {
  assignment_id: MintedId,
  state: ReviewAssignmentState,
  record: ReviewDeployedRequest,
});

/** The records /openapi.json names, in its order (challenge.ts lists each feature's). */
export const REVIEW_RECORDS = {
  ReviewAssignmentCore,
  ReviewPrepareResponse,
  ReviewRetryRequest,
  ReviewCancelRequest,
  ReviewCancelResponse,
  ReviewApprovalRequest,
  ReviewApprovalResponse,
  ReviewDeployedRequest,
  ReviewDeployedResponse,
};
