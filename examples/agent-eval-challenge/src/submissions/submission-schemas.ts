/**
 * The records of the submission routes (POST /submissions, its bridge, GET /submissions), as
 * TypeBox schemas: the routes validate with them and /openapi.json publishes them by title.
 */
import { Type } from "@platform/challenge-sdk";
import { ClosedRecord, Fraction, NamedRecord, Sha256Hex, Timestamp } from "../schema-primitives.js";
import { PUBLIC_SUBMISSION_STATUSES } from "../state/index.js";

/** POST /submissions: the agent as a base64 ZIP and a display name. */
export const SubmissionRequest = NamedRecord("SubmissionRequest", {
  name: Type.String({ minLength: 1, maxLength: 128, description: "A display name" }),
  // No maxLength: an artifact over 1 MiB is 413 artifact_too_large (a size, not a shape), and
  // a body past the route's limit is 413 before it is read.
  artifact_b64: Type.String({
    minLength: 1,
    description: "The agent: a ZIP of at most 1 MiB, base64 (standard alphabet, padded)",
  }),
});

/** The public label of a submission's state (production's names: escalated is "suspicious"). */
export const PublicStatus = Type.Union(
  PUBLIC_SUBMISSION_STATUSES.map((status) => Type.Literal(status)),
  { title: "PublicStatus" },
);

/** The latest evaluation of a submission, when it has one. */
export const LatestEvaluation = NamedRecord("LatestEvaluation", {
  eval_run_id: Type.String(),
  status: Type.String(),
  score: Type.Union([Fraction, Type.Null()]),
  updated_at: Timestamp,
});

/** A stored submission (create and bridge). */
export const SubmissionResponse = NamedRecord("SubmissionResponse", {
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
});

/** One row of GET /submissions: recent submissions, each with its latest score. */
export const SubmissionListItem = NamedRecord("SubmissionListItem", {
  id: Type.Integer({ minimum: 1 }),
  hotkey: Type.String(),
  name: Type.String(),
  artifact_sha256: Sha256Hex,
  status: Type.String(),
  effective_status: PublicStatus,
  latest_score: Type.Union([Fraction, Type.Null()]),
  created_at: Timestamp,
});

/** GET /submissions query. */
export const SubmissionListQuery = ClosedRecord({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
  hotkey: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
});

/** A 429 of the submission window: when the hotkey may submit again (also in Retry-After). */
export const RateLimitedResponse = Type.Object(
  {
    detail: Type.String(),
    code: Type.Literal("submission_rate_limited"),
    next_allowed_at: Timestamp,
    retry_after_seconds: Type.Integer({ minimum: 1 }),
  },
  { title: "RateLimitedResponse" },
);

/** The records /openapi.json names, in its order (challenge.ts lists each feature's). */
export const SUBMISSION_RECORDS = {
  SubmissionRequest,
  SubmissionResponse,
  SubmissionListItem,
  PublicStatus,
  RateLimitedResponse,
};
