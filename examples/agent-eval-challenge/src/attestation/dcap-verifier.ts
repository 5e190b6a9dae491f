// The production verifier: a quote is verified only when its own signature, report_data and
// measurement check out (the common checks) AND a CollateralVerifier chains its attestation key
// to Intel's root. The common checks run first because they are local and definitive: a forged
// or mis-bound quote is rejected (its nonce consumed) even while collateral is unreachable.

import { type CommonCheckResult, runCommonChecks } from "./_common-checks.js";
import {
  type CollateralVerdict,
  type CollateralVerifier,
  type TcbAssessment,
  unavailableCollateralVerifier,
} from "./collateral-verifier.js";
import { normalizeMeasurementAllowList } from "./measurement-allowlist.js";
import {
  type ExpectedQuote,
  type QuoteVerdict,
  type QuoteVerifier,
  rejected,
  unavailable,
} from "./quote-verifier.js";

export interface DcapVerifierOptions {
  /** Defaults to a verifier that is always unavailable (no Intel PCS here). */
  readonly collateral?: CollateralVerifier;
  /** The default MRTD allow-list; empty accepts no measurement at all (fail closed). */
  readonly measurements: readonly string[];
}

/** TDATTRIBUTES bit 0 (TUD.DEBUG): the host can read and write a debug TD's memory. */
const TD_ATTRIBUTES_DEBUG = 0x01;

export function dcapVerifier(options: DcapVerifierOptions): QuoteVerifier {
  const collateral = options.collateral ?? unavailableCollateralVerifier();
  const defaultMeasurements = normalizeMeasurementAllowList(options.measurements);
  return {
    kind: "dcap",
    confidential: true,
    async verify(quote: Buffer, expected: ExpectedQuote): Promise<QuoteVerdict> {
      const checked: CommonCheckResult = runCommonChecks(quote, expected, { defaultMeasurements });
      if (!checked.ok) return checked.verdict;
      // A debug TD is not confidential whatever its measurement: refuse it before spending a
      // collateral round trip on it.
      if ((checked.quote.body.tdAttributes[0]! & TD_ATTRIBUTES_DEBUG) !== 0) {
        return rejected("td_debug_enabled", "the TD was launched with the DEBUG attribute");
      }
      const verdict = await askCollateral(collateral, checked.quote);
      if (verdict.status === "ok") {
        const { measurement } = checked.quote;
        return verdict.tcb
          ? { status: "verified", measurement, quote: checked.quote, tcb: verdict.tcb }
          : { status: "verified", measurement, quote: checked.quote };
      }
      return verdict;
    },
  };
}

// Anything but a well-formed answer (a throw, a malformed object) decides nothing: it becomes
// "unavailable", so a broken collateral plug-in parks reviews instead of passing or burning them.
async function askCollateral(
  collateral: CollateralVerifier,
  quote: Parameters<CollateralVerifier["verifyChain"]>[0],
): Promise<QuoteVerdict | { status: "ok"; tcb?: TcbAssessment }> {
  let verdict: CollateralVerdict;
  try {
    verdict = await collateral.verifyChain(quote);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return unavailable("collateral_failed", `the collateral verifier failed: ${reason}`);
  }
  switch (verdict?.status) {
    case "ok":
      return { status: "ok", ...validTcb(verdict.tcb) };
    case "rejected":
      return {
        ...rejected(String(verdict.code), String(verdict.message)),
        ...validTcb(verdict.tcb),
      };
    case "unavailable":
      return unavailable(String(verdict.code), String(verdict.message));
    default:
      return unavailable("collateral_failed", "the collateral verifier gave no valid verdict");
  }
}

// The assessment is recorded with the verdict, so only a well-formed one is kept.
function validTcb(tcb: unknown): { tcb?: TcbAssessment } {
  const candidate = tcb as TcbAssessment | undefined;
  if (
    typeof candidate?.status === "string" &&
    Array.isArray(candidate.advisoryIds) &&
    candidate.advisoryIds.every((id) => typeof id === "string")
  ) {
    return { tcb: { status: candidate.status, advisoryIds: [...candidate.advisoryIds] } };
  }
  return {};
}
