// The development verifier: trusts exactly one attestation key, the configured development
// public key, and then runs the common checks. NOT confidential: the shipped development key
// is public, so anyone can forge a quote it verifies (any measurement, any report_data). It
// proves the plumbing (binding, allow-list), never that a review ran in a confidential VM.

import { type KeyObject, timingSafeEqual } from "node:crypto";
import { runCommonChecks } from "./_common-checks.js";
import { rawP256PublicKey } from "./attestation-key.js";
import { DEV_MEASUREMENT, loadDevAttestationKey } from "./dev-quote.js";
import { normalizeMeasurementAllowList } from "./measurement-allowlist.js";
import {
  type ExpectedQuote,
  type QuoteVerdict,
  type QuoteVerifier,
  rejected,
} from "./quote-verifier.js";

export interface DevVerifierOptions {
  /** The one trusted attestation key; defaults to the shipped dev-keys/ key. */
  readonly publicKey?: KeyObject;
  /** The default MRTD allow-list; empty or absent means [DEV_MEASUREMENT]. */
  readonly measurements?: readonly string[];
}

export function devVerifier(options: DevVerifierOptions = {}): QuoteVerifier {
  const trustedKey = rawP256PublicKey(options.publicKey ?? loadDevAttestationKey().publicKey);
  const configured = options.measurements ?? [];
  const defaultMeasurements = normalizeMeasurementAllowList(
    configured.length > 0 ? configured : [DEV_MEASUREMENT],
  );
  return {
    kind: "dev",
    confidential: false,
    async verify(quote: Buffer, expected: ExpectedQuote): Promise<QuoteVerdict> {
      const checked = runCommonChecks(quote, expected, {
        defaultMeasurements,
        trustAttestationKey: (parsed) =>
          timingSafeEqual(parsed.signatureData.attestationKey, trustedKey)
            ? null
            : rejected(
                "quote_attestation_key_untrusted",
                "the quote is not signed by the configured development attestation key",
              ),
      });
      if (!checked.ok) return checked.verdict;
      return { status: "verified", measurement: checked.quote.measurement, quote: checked.quote };
    },
  };
}
