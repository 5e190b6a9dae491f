/**
 * The review envelope v1: what the review VM posts to /review/v1/assignments/{id}/report, built
 * here (by the reference review worker) and checked here (by the service) so the two can never
 * disagree on a byte. The service's verification runs in a fixed order: schema (the route's
 * TypeBox body), then the local checks below (digests, binding, time order), then the quote
 * (quote-verifier.ts: signature chain, report_data, measurement allow-list) and the event log.
 * The first failing check names the rejection; nothing later runs.
 */
import type { Static } from "@platform/challenge-sdk";
import { reviewReportData, type VmAttestationInput, vmAttestation } from "../attestation/index.js";
import { canonicalDigest, sha256Hex } from "../crypto/index.js";
import type { ReviewAssignmentCore } from "./issue-assignment.js";
import type {
  ReviewCore,
  ReviewEnvelope as ReviewEnvelopeSchema,
  ReviewFinding,
} from "./review-envelope-schemas.js";
import type { PlannedModelCall } from "./vm-writes.js";

export type ReviewEnvelope = Static<typeof ReviewEnvelopeSchema>;
export type ReviewCoreRecord = Static<typeof ReviewCore>;
export type ReviewFindingRecord = Static<typeof ReviewFinding>;
export type ReviewVerdict = ReviewCoreRecord["verdict"];

export const REVIEW_ENVELOPE_SCHEMA_VERSION = "review-envelope/v1";
export const REVIEW_ENVELOPE_DOMAIN = "platform/agent-eval/review-envelope/v1";
export const REVIEW_CORE_SCHEMA_VERSION = "review-core/v1";

/** Largest evidence object, in bytes, and the most objects one report may carry. */
export const MAX_EVIDENCE_OBJECT_BYTES = 256 * 1024;
export const MAX_EVIDENCE_OBJECTS = 8;

/** A report may be dated this far past the service's clock (the VM's clock drifts). */
export const REPORT_CLOCK_SKEW_MS = 60_000;

/** One evidence object the worker attaches: its name, media type and exact bytes. */
export interface EvidenceInput {
  name: string;
  mediaType: string;
  bytes: Buffer;
}

export interface BuildReviewEnvelopeInput extends VmAttestationInput {
  /** The assignment as GET /review/v1/assignments/{id} answered it. */
  assignment: ReviewAssignmentCore;
  assignmentDigest: string;
  verdict: ReviewVerdict;
  summary: string;
  findings: ReviewFindingRecord[];
  modelCall: ReviewCoreRecord["model_call"];
  evidence: EvidenceInput[];
  reviewer: ReviewCoreRecord["reviewer"];
  reportedAt: string;
}

/** The envelope for one assignment: core, its digest, the report_data binding and the quote. */
export async function buildReviewEnvelope(
  input: BuildReviewEnvelopeInput,
): Promise<ReviewEnvelope> {
  const { assignment } = input;
  const core: ReviewCoreRecord = {
    schema_version: REVIEW_CORE_SCHEMA_VERSION,
    assignment_id: assignment.assignment_id,
    session_id: assignment.session_id,
    assignment_digest: input.assignmentDigest,
    artifact_sha256: assignment.artifact_sha256,
    rules_revision_id: assignment.rules_revision_id,
    verdict: input.verdict,
    summary: input.summary,
    findings: input.findings,
    model_call: input.modelCall,
    evidence: input.evidence.map((object) => ({
      name: object.name,
      media_type: object.mediaType,
      length: object.bytes.length,
      sha256: sha256Hex(object.bytes),
    })),
    reviewer: input.reviewer,
    reported_at: input.reportedAt,
  };
  const reportData = assignmentReportData(assignment, input.assignmentDigest, input.reportedAt);
  return {
    schema_version: REVIEW_ENVELOPE_SCHEMA_VERSION,
    domain: REVIEW_ENVELOPE_DOMAIN,
    review_core: core,
    review_digest: canonicalDigest(core),
    report_data_hex: reportData.toString("hex"),
    attestation: await vmAttestation(input, reportData),
    evidence: input.evidence.map((object) => ({
      name: object.name,
      content_b64: object.bytes.toString("base64"),
    })),
  };
}

/** The report_data a report on `assignment` (digest `assignmentDigest`) dated `reportedAt` binds. */
export function assignmentReportData(
  assignment: ReviewAssignmentCore,
  assignmentDigest: string,
  reportedAt: string,
): Buffer {
  return reviewReportData({
    assignmentDigest,
    sessionId: assignment.session_id,
    nonce: assignment.nonce,
    issuedAt: assignment.issued_at,
    reportedAt,
  });
}

/** sha256 hex of the envelope's canonical JSON: "identical replay" means the same receipt. */
export function envelopeReceiptSha256(envelope: ReviewEnvelope): string {
  return canonicalDigest(envelope);
}

/** The stored form: the evidence bytes live (sealed) in review_evidence, not in the envelope. */
export function envelopeWithoutEvidenceBytes(envelope: ReviewEnvelope): Record<string, unknown> {
  const { evidence: _bytes, ...rest } = envelope;
  return rest;
}

/** What the local checks compare the envelope with: the stored assignment. */
export interface AssignmentUnderReport {
  core: ReviewAssignmentCore;
  coreSha256: string;
  modelCall: PlannedModelCall | null;
  modelCallAt: Date | null;
}

/** A decoded evidence object, ready to be sealed and stored. */
export interface CheckedEvidence {
  name: string;
  mediaType: string;
  sha256: string;
  bytes: Buffer;
}

export type LocalCheckResult =
  | {
      ok: true;
      expectedReportData: Buffer;
      quote: Buffer;
      evidence: CheckedEvidence[];
    }
  | { ok: false; code: EnvelopeRejectionCode; message: string };

/** The rejections the local checks name, in the order they run. */
export const ENVELOPE_REJECTION_CODES = [
  "review_digest_mismatch",
  "assignment_digest_mismatch",
  "evidence_mismatch",
  "assignment_binding_mismatch",
  "model_call_mismatch",
  "report_data_binding_mismatch",
  "time_order_invalid",
  "quote_encoding_invalid",
] as const;
export type EnvelopeRejectionCode = (typeof ENVELOPE_REJECTION_CODES)[number];

const fail = (code: EnvelopeRejectionCode, message: string): LocalCheckResult => ({
  ok: false,
  code,
  message,
});

/**
 * Digests, binding and time order, against the stored assignment: deterministic and local, so a
 * rejection here is definitive (the nonce is consumed, the assignment rejected).
 */
export function checkEnvelopeLocally(
  envelope: ReviewEnvelope,
  assignment: AssignmentUnderReport,
  now: Date,
): LocalCheckResult {
  const core = envelope.review_core;
  // Digests: the core as posted, the assignment it claims, each evidence object.
  if (canonicalDigest(core) !== envelope.review_digest) {
    return fail("review_digest_mismatch", "review_digest is not the sha256 of the canonical core");
  }
  if (core.assignment_digest !== assignment.coreSha256) {
    return fail("assignment_digest_mismatch", "the core names another assignment digest");
  }
  const evidence = checkEvidence(envelope);
  if (!Array.isArray(evidence)) return evidence;

  // Binding: this assignment, its artifact and rules, the bound model call, the report_data.
  const stored = assignment.core;
  if (
    core.assignment_id !== stored.assignment_id ||
    core.session_id !== stored.session_id ||
    core.artifact_sha256 !== stored.artifact_sha256 ||
    core.rules_revision_id !== stored.rules_revision_id
  ) {
    return fail(
      "assignment_binding_mismatch",
      "the core's assignment, session, artifact or rules revision is not this assignment's",
    );
  }
  const bound = assignment.modelCall;
  if (
    bound === null ||
    core.model_call.request_id !== bound.request_id ||
    core.model_call.request_sha256 !== bound.request_sha256
  ) {
    return fail("model_call_mismatch", "the core's model call is not the request bound before it");
  }
  const expectedReportData = assignmentReportData(stored, assignment.coreSha256, core.reported_at);
  if (envelope.report_data_hex !== expectedReportData.toString("hex")) {
    return fail(
      "report_data_binding_mismatch",
      "report_data_hex does not bind this assignment's digest, session, nonce and times",
    );
  }

  // Time order: issued <= model call bound <= reported <= min(expiry, now + skew).
  const reportedAt = Date.parse(core.reported_at);
  const issuedAt = Date.parse(stored.issued_at);
  const expiresAt = Date.parse(stored.expires_at);
  const boundAt = assignment.modelCallAt?.getTime() ?? issuedAt;
  if (
    !(reportedAt >= issuedAt) ||
    reportedAt + REPORT_CLOCK_SKEW_MS < boundAt ||
    reportedAt > expiresAt ||
    reportedAt > now.getTime() + REPORT_CLOCK_SKEW_MS
  ) {
    return fail(
      "time_order_invalid",
      "reported_at must follow the assignment's issue and its model call, and precede its expiry and now",
    );
  }

  const quote = Buffer.from(envelope.attestation.quote, "base64");
  if (quote.toString("base64") !== envelope.attestation.quote) {
    return fail("quote_encoding_invalid", "the quote is not canonical base64");
  }
  return { ok: true, expectedReportData, quote, evidence };
}

function checkEvidence(envelope: ReviewEnvelope): CheckedEvidence[] | LocalCheckResult {
  const refs = envelope.review_core.evidence;
  const objects = new Map(envelope.evidence.map((object) => [object.name, object]));
  const names = new Set(refs.map((ref) => ref.name));
  if (
    names.size !== refs.length ||
    objects.size !== envelope.evidence.length ||
    objects.size !== names.size ||
    ![...names].every((name) => objects.has(name))
  ) {
    return fail(
      "evidence_mismatch",
      "the evidence objects are not exactly the ones the core names (once each)",
    );
  }
  const checked: CheckedEvidence[] = [];
  for (const ref of refs) {
    const bytes = Buffer.from(objects.get(ref.name)!.content_b64, "base64");
    if (bytes.length !== ref.length || sha256Hex(bytes) !== ref.sha256) {
      return fail("evidence_mismatch", `evidence ${ref.name} does not match its length and sha256`);
    }
    checked.push({ name: ref.name, mediaType: ref.media_type, sha256: ref.sha256, bytes });
  }
  return checked;
}
