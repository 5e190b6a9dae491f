// The real TDX quote and its real collateral (test/fixtures/dcap/, see PROVENANCE.md), shaped
// as a PCCS serves them. Private to this folder's tests and the end-to-end test.

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { DcapCollateral } from "./collateral.js";

export const FIXTURES = fileURLToPath(new URL("../../../test/fixtures/dcap/", import.meta.url));

/** Inside every validity window of the fixture's collateral (see PROVENANCE.md). */
export const FIXTURE_TIME = new Date("2025-06-20T00:00:00Z");

/** dcap-qvl's sample collateral JSON (the oracle's own input format). */
export interface QvlCollateral {
  pck_crl_issuer_chain: string;
  root_ca_crl: string;
  pck_crl: string;
  tcb_info_issuer_chain: string;
  tcb_info: string;
  tcb_info_signature: string;
  qe_identity_issuer_chain: string;
  qe_identity: string;
  qe_identity_signature: string;
}

export function realQuote(): Buffer {
  return readFileSync(`${FIXTURES}tdx_quote`);
}

export function realQvlCollateral(): QvlCollateral {
  return JSON.parse(readFileSync(`${FIXTURES}tdx_quote_collateral.json`, "utf8"));
}

/** The same collateral as Intel's PCS v4 answers carry it (bodies verbatim, headers PEM). */
export function toPcsCollateral(qvl: QvlCollateral): DcapCollateral {
  return {
    tcbInfoBody: `{"tcbInfo":${qvl.tcb_info},"signature":"${qvl.tcb_info_signature}"}`,
    tcbInfoIssuerChain: qvl.tcb_info_issuer_chain,
    qeIdentityBody: `{"enclaveIdentity":${qvl.qe_identity},"signature":"${qvl.qe_identity_signature}"}`,
    qeIdentityIssuerChain: qvl.qe_identity_issuer_chain,
    pckCrl: Buffer.from(qvl.pck_crl, "hex"),
    pckCrlIssuerChain: qvl.pck_crl_issuer_chain,
    rootCaCrl: Buffer.from(qvl.root_ca_crl, "hex"),
  };
}

export const realCollateral = () => toPcsCollateral(realQvlCollateral());
