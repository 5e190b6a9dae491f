// The contract between the review service and whatever verifies TDX quotes. A verifier answers
// one of three verdicts, and the caller's nonce handling depends on which:
// - "verified": the quote is genuine for this report_data and an allowed measurement;
// - "rejected": definitive (the caller consumes the nonce and records the refusal);
// - "unavailable": a dependency (collateral) could not be reached, nothing is decided (the
//   caller answers 503 and keeps the nonce, so the same report can be verified later). An
//   outage must park a review, never pass it.

import type { TcbAssessment } from "./collateral-verifier.js";
import type { ParsedTdxQuote } from "./tdx-quote.js";

export const REPORT_DATA_BYTES = 64;

export interface ExpectedQuote {
  /** The 64 report_data bytes the quote must carry (see report-data.ts). */
  readonly reportData: Buffer;
  /** Allow-list of MRTD values, hex; empty means the verifier's own default list. */
  readonly measurements: readonly string[];
}

export type QuoteVerdict =
  | {
      readonly status: "verified";
      readonly measurement: string;
      readonly quote: ParsedTdxQuote;
      /** dcap: the platform's TCB status as Intel's collateral assessed it. */
      readonly tcb?: TcbAssessment;
    }
  | QuoteRejection
  | QuoteUnavailable;

/** A verdict other than "verified", with its stable code and a message for humans. */
interface Refusal<Status extends "rejected" | "unavailable"> {
  readonly status: Status;
  readonly code: string;
  readonly message: string;
}
export type QuoteRejection = Refusal<"rejected"> & {
  /** dcap: the TCB status a policy refused, recorded with the refusal. */
  readonly tcb?: TcbAssessment;
};
export type QuoteUnavailable = Refusal<"unavailable">;

export interface QuoteVerifier {
  /** "dcap": Intel's chain of trust; "dev": a published development key, forgeable by anyone. */
  readonly kind: "dcap" | "dev";
  /** Whether a "verified" verdict means the report really came from a confidential VM. */
  readonly confidential: boolean;
  verify(quote: Buffer, expected: ExpectedQuote): Promise<QuoteVerdict>;
}

export const rejected = (code: string, message: string): QuoteRejection => ({
  status: "rejected",
  code,
  message,
});

export const unavailable = (code: string, message: string): QuoteUnavailable => ({
  status: "unavailable",
  code,
  message,
});
