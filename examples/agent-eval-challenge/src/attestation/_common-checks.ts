// The checks every quote verifier runs, in this order: parse; the ECDSA P-256 signature over
// header||body by the quote's own attestation key; report_data equals the expected bytes
// (constant time); MRTD in the allow-list. What makes the attestation key trustworthy differs
// per verifier, so it is a hook that runs between parsing and the signature check.

import { timingSafeEqual, verify } from "node:crypto";
import { p256PublicKeyFromRaw } from "./attestation-key.js";
import { normalizeMeasurementAllowList } from "./measurement-allowlist.js";
import { TdxQuoteError } from "./quote-error.js";
import {
  type ExpectedQuote,
  type QuoteRejection,
  REPORT_DATA_BYTES,
  rejected,
} from "./quote-verifier.js";
import { type ParsedTdxQuote, parseTdxQuote } from "./tdx-quote.js";

export type CommonCheckResult =
  | { readonly ok: true; readonly quote: ParsedTdxQuote }
  | { readonly ok: false; readonly verdict: QuoteRejection };

export interface CommonCheckOptions {
  /** Used when expected.measurements is empty (already normalised). */
  readonly defaultMeasurements: readonly string[];
  /** A rejection when the verifier does not trust the quote's attestation key, else null. */
  readonly trustAttestationKey?: (quote: ParsedTdxQuote) => QuoteRejection | null;
}

export function runCommonChecks(
  bytes: Buffer,
  expected: ExpectedQuote,
  options: CommonCheckOptions,
): CommonCheckResult {
  // A wrong-sized expectation is the caller's bug, not the quote's fault: throw, decide nothing.
  if (expected.reportData.length !== REPORT_DATA_BYTES) {
    throw new RangeError(`expected report_data must be ${REPORT_DATA_BYTES} bytes`);
  }
  const allowList =
    expected.measurements.length > 0
      ? normalizeMeasurementAllowList(expected.measurements)
      : options.defaultMeasurements;

  let quote: ParsedTdxQuote;
  try {
    quote = parseTdxQuote(bytes);
  } catch (error) {
    if (error instanceof TdxQuoteError) return refuse(error.code, error.message);
    throw error;
  }

  const untrusted = options.trustAttestationKey?.(quote);
  if (untrusted) return { ok: false, verdict: untrusted };

  let signatureValid: boolean;
  try {
    const key = p256PublicKeyFromRaw(quote.signatureData.attestationKey);
    signatureValid = verify(
      "sha256",
      quote.signedBytes,
      { key, dsaEncoding: "ieee-p1363" },
      quote.signatureData.signature,
    );
  } catch {
    // node refuses coordinates that are not a point on P-256: nothing can verify under them.
    return refuse("quote_attestation_key_invalid", "the attestation key is not a P-256 point");
  }
  if (!signatureValid) {
    return refuse(
      "quote_signature_invalid",
      "the quote signature does not verify under its attestation key",
    );
  }

  // Constant time: report_data binds a nonce, and a comparison that leaks the length of the
  // matching prefix would help an attacker grind towards it.
  if (!timingSafeEqual(quote.body.reportData, expected.reportData)) {
    return refuse("report_data_mismatch", "the quote's report_data is not the expected binding");
  }

  if (!allowList.includes(quote.measurement)) {
    return refuse(
      "measurement_not_allowed",
      `MRTD ${quote.measurement} is not in the measurement allow-list`,
    );
  }
  return { ok: true, quote };
}

const refuse = (code: string, message: string): CommonCheckResult => ({
  ok: false,
  verdict: rejected(code, message),
});
