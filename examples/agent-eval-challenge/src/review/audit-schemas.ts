/**
 * The review reads: the owner's history (rule 7), the public report (rule 8) and the internal
 * report (rule 9) share one record; each view fills the fields it may show (docs: "Review reads").
 */
import { Type } from "@platform/challenge-sdk";
import {
  ClosedRecord,
  Literals,
  MintedId,
  NamedRecord,
  NextCursor,
  Nullable,
  PageQuery,
  Sha256Hex,
  Sha384Hex,
  Timestamp,
} from "../schema-primitives.js";
import { DECIDED_ASSIGNMENT_STATES, MAX_ASSIGNMENT_ATTEMPTS } from "../state/index.js";
import { REVIEW_AUDIT_DEFAULT_LIMIT, REVIEW_AUDIT_MAX_LIMIT } from "./review-audit.js";
import {
  AdvisoryIds,
  CheckId,
  EvidenceName,
  ReviewVerification,
  TcbStatusText,
} from "./review-envelope-schemas.js";
import { ReviewAssignmentCore, ReviewAssignmentState } from "./review-schemas.js";

/** The reads' paging: at most 16 items a page (default 10), a signed cursor to go on. */
export const ReviewAuditQuery = PageQuery(REVIEW_AUDIT_MAX_LIMIT, REVIEW_AUDIT_DEFAULT_LIMIT);

const JsonRecord = Type.Record(Type.String(), Type.Unknown());

/** One assignment of a review session, as one view shows it. */
export const ReviewAuditItem = NamedRecord("ReviewAuditItem", {
  assignment_id: MintedId,
  attempt: Type.Integer({ minimum: 1, maximum: MAX_ASSIGNMENT_ATTEMPTS }),
  state: ReviewAssignmentState,
  assignment_digest: Sha256Hex,
  issued_at: Timestamp,
  reported_at: Nullable(Timestamp),
  verified_at: Nullable(Timestamp),
  // The verification's outcome and refusal code (null before an outcome).
  outcome: Nullable(Literals(DECIDED_ASSIGNMENT_STATES)),
  verification_code: Nullable(Type.String()),
  review_digest: Nullable(Sha256Hex),
  receipt_sha256: Nullable(Sha256Hex),
  // history and internal
  predecessor_id: Type.Optional(Nullable(MintedId)),
  expires_at: Type.Optional(Timestamp),
  deployed_at: Type.Optional(Nullable(Timestamp)),
  model_call_at: Type.Optional(Nullable(Timestamp)),
  failed_at: Type.Optional(Nullable(Timestamp)),
  failure_reason_code: Type.Optional(Nullable(Type.String())),
  // public report
  verdict: Type.Optional(
    Nullable(Type.Union([Type.Literal("allow"), Type.Literal("reject"), Type.Literal("escalate")])),
  ),
  verifier: Type.Optional(Nullable(Type.Union([Type.Literal("dcap"), Type.Literal("dev")]))),
  confidential: Type.Optional(Nullable(Type.Boolean())),
  measurement: Type.Optional(Nullable(Sha384Hex)),
  tcb_status: Type.Optional(Nullable(TcbStatusText)),
  advisory_ids: Type.Optional(Nullable(AdvisoryIds)),
  findings: Type.Optional(Type.Array(ClosedRecord({ check_id: CheckId, severity: Type.String() }))),
  evidence: Type.Optional(
    Type.Array(
      ClosedRecord({
        object_ref: Type.Optional(Type.String()),
        name: EvidenceName,
        media_type: Type.String(),
        length: Type.Integer({ minimum: 0 }),
        sha256: Sha256Hex,
      }),
    ),
  ),
  // internal report: the full immutable records
  core: Type.Optional(ReviewAssignmentCore),
  deployed: Type.Optional(Nullable(JsonRecord)),
  model_call: Type.Optional(Nullable(JsonRecord)),
  failure: Type.Optional(Nullable(JsonRecord)),
  envelope: Type.Optional(Nullable(JsonRecord)),
  verification: Type.Optional(Nullable(ReviewVerification)),
});

/** review/history, review/report and the internal review report (ReviewAuditResponse). */
export const ReviewAuditResponse = NamedRecord("ReviewAuditResponse", {
  schema_version: Type.Literal("review-audit/v1"),
  view: Literals(["history", "public_report", "internal_report"]),
  submission_id: Type.Integer({ minimum: 1 }),
  // Null while the submission has no review session.
  session_id: Nullable(MintedId),
  items: Type.Array(ReviewAuditItem, { maxItems: 16 }),
  // Pass as `cursor` for the next page; null on the last one.
  next_cursor: NextCursor,
  // internal report: sha256 hex of the canonical items, so a stored copy can be checked.
  bundle_sha256: Type.Optional(Sha256Hex),
});

/** The records /openapi.json names, in its order (challenge.ts lists each feature's). */
export const REVIEW_AUDIT_RECORDS = { ReviewAuditItem, ReviewAuditResponse };
