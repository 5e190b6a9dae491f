// report_data: the 64 bytes a TDX quote carries for the guest, used here to bind a quote to one
// review report (or one eval result) so it cannot be replayed for another.
//
// report_data = sha256(preimage) || 32 zero bytes, where the preimage is a domain tag followed by
// the fields in a fixed order, each written as a 4-byte big-endian byte length then its UTF-8
// bytes. Length prefixes, not canonical JSON, because:
// - they are unambiguous by construction ("ab"+"c" and "a"+"bc" differ), with no canonicaliser
//   to agree on (key order, number formatting, escaping, Unicode normalisation);
// - a review worker in any language reimplements them in a few lines, byte for byte.
// The domain tag (itself length-prefixed) separates the two uses and versions the layout, so a
// review binding can never be read as an eval binding. Timestamps are hashed as the exact strings
// that appear in the signed record (RFC 3339 as the service wrote them), never re-formatted.

import { createHash } from "node:crypto";
import { REPORT_DATA_BYTES } from "./quote-verifier.js";

export const REVIEW_REPORT_DATA_DOMAIN = "platform/agent-eval/review-report-data/v1";
export const EVAL_RESULT_REPORT_DATA_DOMAIN = "platform/agent-eval/eval-result-report-data/v1";
export const INSTANCE_SEED_REPORT_DATA_DOMAIN = "platform/agent-eval/instance-seed-report-data/v1";

export interface ReviewReportDataInput {
  /** sha256 hex (lowercase) of the canonical assignment core. */
  readonly assignmentDigest: string;
  readonly sessionId: string;
  readonly nonce: string;
  /** The assignment's issue time, exactly as written in the assignment. */
  readonly issuedAt: string;
  /** The report's time, exactly as written in the review core. */
  readonly reportedAt: string;
}

export interface EvalResultReportDataInput {
  /** sha256 hex (lowercase) of the canonical result. */
  readonly resultDigest: string;
  readonly runId: string;
  readonly nonce: string;
}

export function reviewReportData(input: ReviewReportDataInput): Buffer {
  return reportDataOf(REVIEW_REPORT_DATA_DOMAIN, [
    digestField("assignmentDigest", input.assignmentDigest),
    textField("sessionId", input.sessionId),
    textField("nonce", input.nonce),
    textField("issuedAt", input.issuedAt),
    textField("reportedAt", input.reportedAt),
  ]);
}

export function evalResultReportData(input: EvalResultReportDataInput): Buffer {
  return reportDataOf(EVAL_RESULT_REPORT_DATA_DOMAIN, [
    digestField("resultDigest", input.resultDigest),
    textField("runId", input.runId),
    textField("nonce", input.nonce),
  ]);
}

/**
 * The binding of an instance-seed release request: the run, its plan's digest and nonce, and the
 * X25519 public key the seed is sealed to, so the quote vouches that the key lives in the TD.
 */
export function instanceSeedReportData(input: {
  readonly planDigest: string;
  readonly runId: string;
  readonly nonce: string;
  readonly publicKey: string;
}): Buffer {
  return reportDataOf(INSTANCE_SEED_REPORT_DATA_DOMAIN, [
    digestField("planDigest", input.planDigest),
    textField("runId", input.runId),
    textField("nonce", input.nonce),
    textField("publicKey", input.publicKey),
  ]);
}

function reportDataOf(domain: string, fields: readonly string[]): Buffer {
  const hash = createHash("sha256");
  for (const part of [domain, ...fields]) {
    const bytes = Buffer.from(part, "utf8");
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length, 0);
    hash.update(length).update(bytes);
  }
  const reportData = Buffer.alloc(REPORT_DATA_BYTES);
  hash.digest().copy(reportData, 0);
  return reportData;
}

// Strict inputs: a digest in upper case or an empty nonce is a caller bug that would otherwise
// surface much later as an unexplained report_data mismatch.
function digestField(name: string, value: string): string {
  if (!/^[0-9a-f]{64}$/.test(value)) {
    throw new RangeError(`${name} must be a lowercase sha256 hex digest`);
  }
  return value;
}

function textField(name: string, value: string): string {
  if (typeof value !== "string" || value.length === 0) {
    throw new RangeError(`${name} must be a non-empty string`);
  }
  return value;
}
