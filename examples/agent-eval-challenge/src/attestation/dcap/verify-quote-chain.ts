// Intel's chain of trust for one TDX v4 quote, at one verification time, against one set of
// collateral. The quote's own signature by its attestation key is checked by the common checks
// (../_common-checks.ts); this is everything that makes that key Intel's:
//   root CA CRL (signed by the pinned root) -> PCK CRL (signed by the PCK CA) -> PCK chain to
//   the pinned root, nothing revoked -> QE report signed by the PCK key -> QE report_data binds
//   the attestation key and QE auth data -> TCB info (signed to the same root, current, this
//   FMSPC) gives the platform's status -> QE identity (signed, current) gives the QE's status.
// Every refusal throws a DcapChainError with its own code.

import { createHash, type KeyObject, timingSafeEqual, verify } from "node:crypto";
import type { ParsedTdxQuote } from "../tdx-quote.js";
import { checkNotRevoked, verifyCertChain } from "./cert-chain.js";
import {
  parsePemChain,
  parseQeCertificationData,
  type QeCertificationData,
} from "./certification-data.js";
import type { DcapCollateral } from "./collateral.js";
import { type Crl, checkCrl, parseCrl } from "./crl.js";
import { chainError } from "./dcap-error.js";
import { intelSgxRootKey } from "./intel-root-ca.js";
import { pckExtensions } from "./pck-extensions.js";
import { matchQeIdentity, parseQeIdentity } from "./qe-identity.js";
import { checkIssueWindow, checkJsonSignature, splitSignedJson } from "./signed-json.js";
import { matchTdxTcb, parseTdxTcbInfo } from "./tcb-info.js";
import { mergeTcb, type TcbVerdict } from "./tcb-status.js";

export interface ChainOptions {
  readonly now: Date;
  /** Intel's pinned root unless a test substitutes its own (never configurable in service). */
  readonly rootKey?: KeyObject;
}

export function verifyQuoteChain(
  quote: ParsedTdxQuote,
  collateral: DcapCollateral,
  options: ChainOptions,
): TcbVerdict {
  const { now } = options;
  const rootKey = options.rootKey ?? intelSgxRootKey();
  const rootCaCrl = parseCrl(collateral.rootCaCrl, "root_ca_crl");
  checkCrl(rootCaCrl, rootKey, now, "root_ca_crl");

  const certification = parseQeCertificationData(
    quote.signatureData.certificationDataType,
    quote.signatureData.certificationData,
  );
  // The PCK chain is anchored to the pinned root first; only then is the PCK CRL (which must be
  // signed by this chain's CA) verified and the chain checked against it.
  const pckChain = certification.pckChain;
  const pckCheck = { name: "pck_chain", rootKey, now, rootCaCrl };
  verifyCertChain(pckChain, { ...pckCheck, intermediateCrl: null });
  const pckCrl = verifiedPckCrl(collateral, certification, { rootKey, now, rootCaCrl });
  checkNotRevoked(pckChain, { ...pckCheck, intermediateCrl: pckCrl });

  checkQeReport(certification, quote.signatureData.attestationKey);

  const pck = pckExtensions(pckChain[0]!);
  const platform = matchTdxTcb(
    signedDocument(
      collateral.tcbInfoBody,
      collateral.tcbInfoIssuerChain,
      "tcbInfo",
      "tcb_info",
      {
        rootKey,
        now,
        rootCaCrl,
      },
      parseTdxTcbInfo,
    ),
    pck,
    quote.body,
  );
  const qe = matchQeIdentity(
    signedDocument(
      collateral.qeIdentityBody,
      collateral.qeIdentityIssuerChain,
      "enclaveIdentity",
      "qe_identity",
      { rootKey, now, rootCaCrl },
      parseQeIdentity,
    ),
    certification.qeReport,
  );
  return mergeTcb(platform, qe);
}

interface Anchors {
  readonly rootKey: KeyObject;
  readonly now: Date;
  readonly rootCaCrl: Crl;
}

/** The PCK CRL, signed by the CA that issued this PCK certificate (whose chain is checked). */
function verifiedPckCrl(collateral: DcapCollateral, cert: QeCertificationData, anchors: Anchors) {
  const issuerChain = parsePemChain(collateral.pckCrlIssuerChain, "pck_crl_chain_malformed");
  verifyCertChain(issuerChain, { name: "pck_crl_chain", ...anchors });
  const pckCa = cert.pckChain[1];
  if (!pckCa?.raw.equals(issuerChain[0]!.raw)) {
    throw chainError(
      "pck_crl_issuer_mismatch",
      "the PCK CRL is not issued by the CA that issued the quote's PCK certificate",
    );
  }
  const crl = parseCrl(collateral.pckCrl, "pck_crl");
  checkCrl(crl, pckCa.publicKey, anchors.now, "pck_crl");
  return crl;
}

/** The QE report is signed by the PCK key and binds sha256(attestation key || QE auth data). */
function checkQeReport(cert: QeCertificationData, attestationKey: Buffer): void {
  let signed = false;
  try {
    signed = verify(
      "sha256",
      cert.qeReportBytes,
      { key: cert.pckChain[0]!.publicKey, dsaEncoding: "ieee-p1363" },
      cert.qeReportSignature,
    );
  } catch {
    signed = false;
  }
  if (!signed) {
    throw chainError("qe_report_signature_invalid", "the QE report is not signed by the PCK key");
  }
  const expected = Buffer.alloc(64);
  createHash("sha256").update(attestationKey).update(cert.qeAuthData).digest().copy(expected);
  if (!timingSafeEqual(expected, cert.qeReport.reportData)) {
    throw chainError(
      "qe_report_binding_mismatch",
      "the QE report does not bind this attestation key and QE authentication data",
    );
  }
}

/** A signed JSON document checked to the root, its signature and its window, then parsed. */
function signedDocument<T extends { issueDate: string; nextUpdate: string }>(
  body: string,
  issuerChainPem: string,
  key: string,
  name: string,
  anchors: Anchors,
  parse: (raw: string) => T,
): T {
  const chain = parsePemChain(issuerChainPem, `${name}_chain_malformed`);
  verifyCertChain(chain, { name: `${name}_chain`, ...anchors });
  // Any CA under the root (a PCK CA, say) could sign JSON: only Intel's TCB signing
  // certificate speaks for TCB levels and QE identities.
  if (!/(^|\n)CN=Intel SGX TCB Signing(\n|$)/.test(chain[0]!.subject) || chain[0]!.ca) {
    throw chainError(
      `${name}_chain_signer_invalid`,
      `the ${name.replace(/_/g, " ")} is not signed by Intel's TCB signing certificate`,
    );
  }
  const signed = splitSignedJson(body, key, name);
  checkJsonSignature(signed, chain[0]!.publicKey, name);
  const doc = parse(signed.raw);
  checkIssueWindow(doc, anchors.now, name);
  return doc;
}
