/**
 * The evidence a report carries, and what the TD measures: `review-findings.json` (every finding
 * and every file the review read, by path, size and sha256), and the RTMR3 events that pin the
 * reviewer, the rules, the artifact and the model request into the quote.
 */
import type { ZipFileEntry } from "@platform/challenge-sdk/zip";
import { type EventLogEntry, workloadEvents } from "../attestation/index.js";
import { sha256Hex } from "../crypto/index.js";
import type {
  EvidenceInput,
  ReviewFindingRecord,
  ReviewVerdict,
} from "../review/review-envelope.js";

export interface FindingsEvidenceInput {
  verdict: ReviewVerdict;
  staticVerdict: ReviewVerdict;
  modelVerdict: ReviewVerdict | null;
  findings: readonly ReviewFindingRecord[];
  files: readonly ZipFileEntry[];
  /** Why the ZIP could not be read (its files are then not listed). */
  zipError: { code: string; message: string } | null;
}

/** review-findings.json, as its exact bytes. */
export function findingsEvidence(input: FindingsEvidenceInput): EvidenceInput {
  const document = {
    schema_version: "review-findings/v1",
    verdict: input.verdict,
    static_verdict: input.staticVerdict,
    model_verdict: input.modelVerdict,
    findings: input.findings,
    zip_error: input.zipError,
    files: input.files.map((file) => ({
      path: file.path,
      size: file.data.length,
      sha256: sha256Hex(file.data),
    })),
  };
  return {
    name: "review-findings.json",
    mediaType: "application/json",
    bytes: Buffer.from(JSON.stringify(document), "utf8"),
  };
}

export interface MeasuredInputs {
  reviewer: { name: string; version: string };
  rulesRevisionId: string;
  artifactSha256: string;
  modelRequestSha256: string;
}

/** The worker's RTMR3 events, in the order it measures them. */
export function reviewEventLog(inputs: MeasuredInputs): EventLogEntry[] {
  return workloadEvents([
    ["reviewer-version", `${inputs.reviewer.name}@${inputs.reviewer.version}`],
    ["rules-revision", inputs.rulesRevisionId],
    ["artifact-sha256", inputs.artifactSha256],
    ["model-request-sha256", inputs.modelRequestSha256],
  ]);
}
