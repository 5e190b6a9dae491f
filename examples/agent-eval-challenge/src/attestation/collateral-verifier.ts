// The chain of trust behind a DCAP quote lives outside the quote's own signature: the QE report
// (signed by the PCK key, binding the attestation key), the PCK certificate chain up to Intel's
// root, the TCB level and its status, the QE identity and revocation lists, all fetched from
// Intel's PCS (or a caching PCCS). This interface is where that work plugs in.

import type { QuoteRejection, QuoteUnavailable } from "./quote-verifier.js";
import type { ParsedTdxQuote } from "./tdx-quote.js";

/** Intel's TCB status of the platform and its advisory ids, when the chain gave one. */
export interface TcbAssessment {
  readonly status: string;
  readonly advisoryIds: readonly string[];
}

export type CollateralVerdict =
  | { readonly status: "ok"; readonly tcb?: TcbAssessment }
  | QuoteRejection
  | QuoteUnavailable;

export interface CollateralVerifier {
  verifyChain(quote: ParsedTdxQuote): Promise<CollateralVerdict>;
}

/**
 * The default without DCAP_COLLATERAL_URL: no Intel collateral, so nothing can be chained to
 * Intel's root and every otherwise-valid quote stays "unavailable" (parked, never passed).
 */
export function unavailableCollateralVerifier(): CollateralVerifier {
  return {
    verifyChain: async () => ({
      status: "unavailable",
      code: "collateral_unavailable",
      message: "no Intel PCS collateral source is configured, the chain of trust cannot be checked",
    }),
  };
}
