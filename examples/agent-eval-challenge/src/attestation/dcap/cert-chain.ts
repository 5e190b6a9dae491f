// An X.509 chain (leaf first) checked up to Intel's SGX Root CA: the last certificate carries
// exactly the pinned root key and signs itself; each other certificate is issued and signed by
// the next, which must be a CA; every certificate is within its validity at the verification
// time; and none is revoked (certificates the root issued by the root CA CRL, certificates an
// intermediate issued by that intermediate's CRL, the PCK CRL).

import type { KeyObject, X509Certificate } from "node:crypto";
import type { Crl } from "./crl.js";
import { chainError } from "./dcap-error.js";
import { normalizeSerial } from "./der.js";

export interface ChainCheck {
  /** Prefixes the codes: "pck_chain", "tcb_info_chain", "qe_identity_chain", "pck_crl_chain". */
  readonly name: string;
  readonly rootKey: KeyObject;
  readonly now: Date;
  /** Revocations by the root (already verified); required by checkNotRevoked. */
  readonly rootCaCrl?: Crl;
  /**
   * Revocations by the intermediate, for a three-certificate chain (already verified); null to
   * anchor the chain now and call checkNotRevoked once that CRL is verified.
   */
  readonly intermediateCrl?: Crl | null;
}

export function verifyCertChain(chain: readonly X509Certificate[], check: ChainCheck): void {
  const label = check.name.replace(/_/g, " ");
  const fail = (what: string, message: string) =>
    chainError(`${check.name}_${what}`, `${label}: ${message}`);
  if (chain.length < 2) throw fail("malformed", "a chain needs a certificate and the root");
  if (chain.length > 3) throw fail("malformed", "Intel's chains are at most three certificates");

  const root = chain[chain.length - 1]!;
  const rootSpki = root.publicKey.export({ type: "spki", format: "der" });
  const pinned = check.rootKey.export({ type: "spki", format: "der" });
  if (!rootSpki.equals(pinned) || !safeVerify(root, check.rootKey)) {
    throw fail("untrusted_root", "the chain does not end in Intel's SGX Root CA");
  }
  for (let i = 0; i < chain.length - 1; i++) {
    if (!issuedBy(chain[i]!, chain[i + 1]!)) {
      throw fail("signature_invalid", `certificate ${i} is not issued by the next one`);
    }
  }
  for (const [i, cert] of chain.entries()) {
    if (check.now < new Date(cert.validFrom) || check.now > new Date(cert.validTo)) {
      throw fail("expired", `certificate ${i} is not valid at ${check.now.toISOString()}`);
    }
  }
  if (check.intermediateCrl !== null) checkNotRevoked(chain, check);
}

/** Separate so a chain can be anchored before its intermediate's CRL is known to be its own. */
export function checkNotRevoked(chain: readonly X509Certificate[], check: ChainCheck): void {
  const fail = (what: string, message: string) =>
    chainError(`${check.name}_${what}`, `${check.name.replace(/_/g, " ")}: ${message}`);
  for (let i = 0; i < chain.length - 1; i++) {
    const issuedByRoot = i === chain.length - 2;
    const crl = issuedByRoot ? check.rootCaCrl : check.intermediateCrl;
    if (!crl) throw fail("malformed", `no CRL covers certificate ${i}`);
    if (crl.revokedSerials.has(normalizeSerial(chain[i]!.serialNumber))) {
      throw fail("revoked", `certificate ${i} (serial ${chain[i]!.serialNumber}) is revoked`);
    }
  }
}

function issuedBy(cert: X509Certificate, issuer: X509Certificate): boolean {
  try {
    return issuer.ca && cert.checkIssued(issuer) && safeVerify(cert, issuer.publicKey);
  } catch {
    return false;
  }
}

function safeVerify(cert: X509Certificate, key: KeyObject): boolean {
  try {
    return cert.verify(key);
  } catch {
    return false;
  }
}
