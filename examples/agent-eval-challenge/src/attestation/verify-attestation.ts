// One attestation block ({quote, event_log, measurement}) checked against the report_data it
// must bind: the configured quote verifier (signature chain, report_data, measurement
// allow-list), then the event log replayed against the quote's RTMRs, then the claimed
// measurement against the quote's MRTD. Shared by review reports and eval results, so both are
// held to exactly the same standard.

import type { TcbAssessment } from "./collateral-verifier.js";
import { type EventLogEntry, replayEventLog } from "./event-log.js";
import { type QuoteRejection, type QuoteVerifier, rejected } from "./quote-verifier.js";

export interface AttestationBlock {
  readonly quote: string;
  readonly event_log: readonly EventLogEntry[];
  readonly measurement: string;
}

export type AttestationVerdict =
  | { readonly status: "verified"; readonly measurement: string; readonly tcb?: TcbAssessment }
  | QuoteRejection
  | { readonly status: "unavailable" };

export async function verifyAttestation(
  verifier: QuoteVerifier,
  attestation: AttestationBlock,
  expectedReportData: Buffer,
): Promise<AttestationVerdict> {
  const verdict = await verifier.verify(Buffer.from(attestation.quote, "base64"), {
    reportData: expectedReportData,
    measurements: [],
  });
  if (verdict.status === "unavailable") return { status: "unavailable" };
  if (verdict.status === "rejected") return verdict;
  // The chain's TCB assessment stays with the verdict even when a later check refuses.
  const assessed = verdict.tcb ? { tcb: verdict.tcb } : {};
  const replayed = replayEventLog(attestation.event_log);
  const quoted = verdict.quote.body.rtmrs.map((register) => register.toString("hex"));
  if (replayed.some((register, index) => register !== quoted[index])) {
    return {
      ...rejected("event_log_mismatch", "replaying the event log does not give the quote's RTMRs"),
      ...assessed,
    };
  }
  if (attestation.measurement !== verdict.measurement) {
    return {
      ...rejected("measurement_mismatch", "the claimed measurement is not the quote's MRTD"),
      ...assessed,
    };
  }
  return verdict.tcb
    ? { status: "verified", measurement: verdict.measurement, tcb: verdict.tcb }
    : { status: "verified", measurement: verdict.measurement };
}

/**
 * A decided verdict as a review's or a result's verification stores it: the verifier, and the
 * refusal (its message cut to 1 KiB) or the measurement.
 */
export function decidedVerification(
  verifier: QuoteVerifier,
  verdict: Exclude<AttestationVerdict, { status: "unavailable" }>,
) {
  const refusal = verdict.status === "rejected" ? verdict : null;
  return {
    status: verdict.status,
    code: refusal?.code ?? null,
    message: refusal?.message.slice(0, 1024) ?? null,
    verifier: verifier.kind,
    confidential: verifier.confidential,
    measurement: verdict.status === "verified" ? verdict.measurement : null,
    // Intel's TCB status and advisories when the dcap chain assessed them (verified, or refused
    // for an unaccepted status); null for dev and for refusals before the assessment.
    tcb_status: verdict.tcb?.status ?? null,
    advisory_ids: verdict.tcb ? [...verdict.tcb.advisoryIds] : null,
  };
}
