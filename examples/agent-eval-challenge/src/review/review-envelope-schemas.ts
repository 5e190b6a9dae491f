/**
 * The attested review report (review envelope v1), its attestation and its receipt, as TypeBox
 * schemas; docs/challenges/agent-eval.md ("The review envelope") explains every field.
 */
import { Type } from "@platform/challenge-sdk";
import { MAX_EVENT_LOG_ENTRIES, MAX_TDX_QUOTE_BYTES } from "../attestation/index.js";
import {
  ClosedRecord,
  Literals,
  MintedId,
  NamedRecord,
  Nullable,
  Sha256Hex,
  Sha384Hex,
  Timestamp,
} from "../schema-primitives.js";
import { DECIDED_ASSIGNMENT_STATES } from "../state/index.js";
import { MAX_EVIDENCE_OBJECT_BYTES, MAX_EVIDENCE_OBJECTS } from "./review-envelope.js";
import { ReviewAssignmentState } from "./review-schemas.js";

/** An evidence object's name, as the core's refs and the envelope's objects carry it. */
export const EvidenceName = Type.String({ pattern: "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$" });
/** The id of the check a finding reports. */
export const CheckId = Type.String({ pattern: "^[a-z][a-z0-9_.-]{0,63}$" });

/** One finding of the review: which check, how severe, where, and why. */
export const ReviewFinding = NamedRecord("ReviewFinding", {
  check_id: CheckId,
  severity: Literals(["info", "warning", "escalate", "block"]),
  path: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
  message: Type.String({ minLength: 1, maxLength: 1024 }),
});

/** An evidence object the core commits to: the envelope's `evidence` carries its bytes. */
export const ReviewEvidenceRef = NamedRecord("ReviewEvidenceRef", {
  name: EvidenceName,
  media_type: Type.String({ pattern: "^[a-z0-9][a-z0-9.+-]{0,63}/[a-z0-9][a-z0-9.+-]{0,63}$" }),
  length: Type.Integer({ minimum: 0, maximum: MAX_EVIDENCE_OBJECT_BYTES }),
  sha256: Sha256Hex,
});

/**
 * What the review VM concluded, bound to one assignment: the envelope's `review_digest` is the
 * sha256 hex of its RFC 8785 canonical JSON, and the quote's report_data binds the assignment
 * digest, session, nonce, issue time and `reported_at`.
 */
export const ReviewCore = NamedRecord("ReviewCore", {
  schema_version: Type.Literal("review-core/v1"),
  assignment_id: MintedId,
  session_id: MintedId,
  assignment_digest: Sha256Hex,
  artifact_sha256: Sha256Hex,
  rules_revision_id: Sha256Hex,
  verdict: Type.Union([Type.Literal("allow"), Type.Literal("reject"), Type.Literal("escalate")]),
  summary: Type.String({ maxLength: 2048 }),
  findings: Type.Array(ReviewFinding, { maxItems: 256 }),
  // The request bound by model-call-started (always: a report follows it), and the sha256 of
  // what came back (null when no model was configured and the request was never sent).
  model_call: ClosedRecord({
    request_id: MintedId,
    request_sha256: Sha256Hex,
    response_sha256: Nullable(Sha256Hex),
  }),
  evidence: Type.Array(ReviewEvidenceRef, { maxItems: MAX_EVIDENCE_OBJECTS }),
  reviewer: ClosedRecord({
    name: Type.String({ pattern: "^[a-z0-9][a-z0-9._-]{0,63}$" }),
    version: Type.String({ pattern: "^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$" }),
  }),
  reported_at: Timestamp,
});

/** One entry of the TD's runtime event log (src/attestation/event-log.ts). */
export const EventLogEntry = NamedRecord("EventLogEntry", {
  imr: Type.Integer({ minimum: 0, maximum: 3 }),
  event: Type.String({ minLength: 1, maxLength: 128 }),
  digest: Sha384Hex,
});

/** The quote and what it attests: the event log, the MRTD it claims, the VM's shape. */
export const ReviewAttestation = NamedRecord("ReviewAttestation", {
  // Base64 of the TDX quote v4 bytes: at most MAX_TDX_QUOTE_BYTES (64 KiB: 87,384 characters).
  quote: Type.String({
    minLength: 4,
    maxLength: 4 * Math.ceil(MAX_TDX_QUOTE_BYTES / 3),
    pattern: "^[A-Za-z0-9+/]+={0,2}$",
  }),
  event_log: Type.Array(EventLogEntry, { maxItems: MAX_EVENT_LOG_ENTRIES }),
  measurement: Sha384Hex,
  vm_config: ClosedRecord({
    vcpus: Type.Integer({ minimum: 1, maximum: 1024 }),
    memory_mib: Type.Integer({ minimum: 1, maximum: 16_777_216 }),
    image_digest: Type.String({ pattern: "^sha256:[0-9a-f]{64}$" }),
  }),
});

/** One evidence object's bytes, named as in the core's `evidence`. */
export const ReviewEvidenceObject = NamedRecord("ReviewEvidenceObject", {
  name: EvidenceName,
  content_b64: Type.String({
    maxLength: Math.ceil(MAX_EVIDENCE_OBJECT_BYTES / 3) * 4,
    pattern: "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$",
  }),
});

/** POST /review/v1/assignments/{id}/report: the review envelope v1. */
export const ReviewEnvelope = NamedRecord("ReviewEnvelope", {
  schema_version: Type.Literal("review-envelope/v1"),
  domain: Type.Literal("platform/agent-eval/review-envelope/v1"),
  review_core: ReviewCore,
  review_digest: Sha256Hex,
  report_data_hex: Type.String({ pattern: "^[0-9a-f]{128}$" }),
  attestation: ReviewAttestation,
  evidence: Type.Array(ReviewEvidenceObject, { maxItems: MAX_EVIDENCE_OBJECTS }),
});

/** Intel's TCB status names (UpToDate, OutOfDate, ...), as a verdict records them. */
export const TcbStatusText = Type.String({ pattern: "^[A-Za-z]{1,64}$" });
/** Intel's security advisory ids (INTEL-SA-00837, ...). */
export const AdvisoryIds = Type.Array(Type.String({ pattern: "^[A-Za-z0-9-]{1,32}$" }), {
  maxItems: 256,
});

/** The definitive outcome of verifying a report (absent while the verifier is unavailable). */
export const ReviewVerification = NamedRecord("ReviewVerification", {
  status: Type.Union([Type.Literal("verified"), Type.Literal("rejected")]),
  // The verdict the assignment took: the core's verdict when verified, else reject.
  outcome: Literals(DECIDED_ASSIGNMENT_STATES),
  // Why verification refused the report (null when verified).
  code: Nullable(Type.String({ pattern: "^[a-z][a-z0-9_]{0,63}$" })),
  message: Nullable(Type.String({ maxLength: 1024 })),
  verifier: Type.Union([Type.Literal("dcap"), Type.Literal("dev")]),
  // false for the development verifier: its quotes can be forged by anyone.
  confidential: Type.Boolean(),
  measurement: Nullable(Sha384Hex),
  // dcap: Intel's TCB status of the platform and its security advisories, once the chain gave
  // them (null for dev and for refusals decided before; absent from older verdicts).
  tcb_status: Type.Optional(Nullable(TcbStatusText)),
  advisory_ids: Type.Optional(Nullable(AdvisoryIds)),
});

/** The report route's answer: 202 on first receipt, 200 on an identical replay. */
export const ReviewReportReceiptResponse = NamedRecord("ReviewReportReceiptResponse", {
  assignment_id: MintedId,
  session_id: MintedId,
  state: ReviewAssignmentState,
  // sha256 hex of the received envelope's canonical JSON: what "identical" means.
  receipt_sha256: Sha256Hex,
  review_digest: Sha256Hex,
  received_at: Timestamp,
  verification: ReviewVerification,
});

/** The records /openapi.json names, in its order (challenge.ts lists each feature's). */
export const REVIEW_ENVELOPE_RECORDS = {
  ReviewEnvelope,
  ReviewCore,
  ReviewFinding,
  ReviewEvidenceRef,
  ReviewEvidenceObject,
  ReviewAttestation,
  EventLogEntry,
  ReviewVerification,
  ReviewReportReceiptResponse,
};
