// The CollateralVerifier that does Intel's chain of trust: it reads the platform (FMSPC, PCK CA)
// from the quote's PCK certificate, asks a CollateralSource for that platform's collateral,
// verifies the chain (verify-quote-chain.ts) and applies the TCB status policy.
//
// Whose fault a failure is decides the verdict. A failure of the quote (a bad QE report, a PCK
// chain to another root, a revoked PCK, a platform below every TCB level, an unaccepted status)
// is "rejected": definitive, the nonce consumed. A failure of the collateral (none to be had,
// expired, badly signed, for another platform) says nothing about the quote: "unavailable", the
// nonce kept, so the same report verifies once good collateral is back.

import type { KeyObject } from "node:crypto";
import type { CollateralVerdict, CollateralVerifier } from "../collateral-verifier.js";
import { rejected, unavailable } from "../quote-verifier.js";
import type { ParsedTdxQuote } from "../tdx-quote.js";
import { verifyCertChain } from "./cert-chain.js";
import { parseQeCertificationData } from "./certification-data.js";
import type { DcapCollateral } from "./collateral.js";
import { DcapChainError } from "./dcap-error.js";
import { intelSgxRootKey } from "./intel-root-ca.js";
import { pckExtensions } from "./pck-extensions.js";
import { DEFAULT_ACCEPTED_TCB_STATUSES } from "./tcb-policy.js";
import type { TcbStatus, TcbVerdict } from "./tcb-status.js";
import { verifyQuoteChain } from "./verify-quote-chain.js";

export type PckCa = "platform" | "processor";

export interface CollateralRequest {
  /** Lowercase hex, 6 bytes, from the PCK certificate. */
  readonly fmspc: string;
  readonly ca: PckCa;
}

export interface CollateralSource {
  /** Current collateral for the platform, or null when none can be had right now. */
  collateralFor(request: CollateralRequest): Promise<DcapCollateral | null>;
}

export interface IntelCollateralVerifierOptions {
  readonly source: CollateralSource;
  readonly acceptedStatuses?: readonly TcbStatus[];
  readonly now?: () => Date;
  /** Tests only: a root other than Intel's pinned one. */
  readonly rootKey?: KeyObject;
}

export type IntelCollateralVerdict =
  | { readonly status: "ok"; readonly tcb: TcbVerdict }
  | Exclude<CollateralVerdict, { status: "ok" }>;

/** Codes that blame the collateral, not the quote (see the header). */
const COLLATERAL_FAULT =
  /^(root_ca_crl_|pck_crl_|tcb_info_|qe_identity_(chain_|signature_invalid|malformed|expired))/;

export function intelCollateralVerifier(
  options: IntelCollateralVerifierOptions,
): CollateralVerifier {
  const accepted = options.acceptedStatuses ?? DEFAULT_ACCEPTED_TCB_STATUSES;
  const now = options.now ?? (() => new Date());
  return {
    async verifyChain(quote: ParsedTdxQuote): Promise<IntelCollateralVerdict> {
      let request: CollateralRequest;
      try {
        request = platformOf(quote, { now: now(), rootKey: options.rootKey });
      } catch (error) {
        if (error instanceof DcapChainError) return rejected(error.code, error.message);
        throw error;
      }
      const collateral = await options.source.collateralFor(request);
      if (!collateral) {
        return unavailable(
          "collateral_unavailable",
          `no current Intel collateral for FMSPC ${request.fmspc} (${request.ca} CA)`,
        );
      }
      let tcb: TcbVerdict;
      try {
        tcb = verifyQuoteChain(quote, collateral, { now: now(), rootKey: options.rootKey });
      } catch (error) {
        if (!(error instanceof DcapChainError)) throw error;
        return COLLATERAL_FAULT.test(error.code)
          ? unavailable(error.code, error.message)
          : rejected(error.code, error.message);
      }
      // Revoked is refused even if a caller lists it: Intel has revoked the platform's keys.
      if (tcb.status === "Revoked" || !accepted.includes(tcb.status)) {
        const advisories = tcb.advisoryIds.length > 0 ? ` (${tcb.advisoryIds.join(", ")})` : "";
        return {
          ...rejected(
            "tcb_status_not_accepted",
            `the platform's TCB status ${tcb.status}${advisories} is not accepted ` +
              `(accepted: ${accepted.join(", ")})`,
          ),
          tcb,
        };
      }
      return { status: "ok", tcb };
    },
  };
}

/**
 * The platform a quote's PCK certificate names: its FMSPC and which PCK CA issued it. The chain
 * is anchored to the pinned root first, so only a platform Intel certified can make the service
 * fetch (and cache) collateral: a forged certificate cannot fill the cache with made-up FMSPCs.
 */
export function platformOf(
  quote: ParsedTdxQuote,
  anchor: { now: Date; rootKey?: KeyObject | undefined },
): CollateralRequest {
  const certification = parseQeCertificationData(
    quote.signatureData.certificationDataType,
    quote.signatureData.certificationData,
  );
  verifyCertChain(certification.pckChain, {
    name: "pck_chain",
    rootKey: anchor.rootKey ?? intelSgxRootKey(),
    now: anchor.now,
    intermediateCrl: null,
  });
  const [leaf, ca] = certification.pckChain;
  const fmspc = pckExtensions(leaf!).fmspc.toString("hex");
  const issuer = ca?.subject ?? "";
  if (/CN=Intel SGX PCK Platform CA/.test(issuer)) return { fmspc, ca: "platform" };
  if (/CN=Intel SGX PCK Processor CA/.test(issuer)) return { fmspc, ca: "processor" };
  throw new DcapChainError("pck_chain_malformed", "the PCK certificate's CA is not a PCK CA");
}
