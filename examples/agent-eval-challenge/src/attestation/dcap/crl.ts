// Certificate revocation lists (RFC 5280 CertificateList), as Intel issues them: the root CA
// CRL (intermediates the root revoked) and the PCK CA CRL (revoked PCK certificates). A CRL
// counts only when its signature verifies under the CA that issued the certificates it covers
// and the verification time lies within its thisUpdate..nextUpdate.

import { type KeyObject, verify } from "node:crypto";
import { chainError } from "./dcap-error.js";
import {
  children,
  DER_TAG,
  type DerNode,
  derTime,
  expectTag,
  integerHex,
  oidString,
  parseDer,
} from "./der.js";

const ECDSA_WITH_SHA256 = "1.2.840.10045.4.3.2";

export interface Crl {
  readonly thisUpdate: Date;
  readonly nextUpdate: Date;
  /** Revoked serial numbers, uppercase hex without leading zeros. */
  readonly revokedSerials: ReadonlySet<string>;
  readonly tbs: Buffer;
  readonly signatureAlgorithm: string;
  /** The DER ECDSA signature (the BIT STRING's content after its unused-bits octet). */
  readonly signature: Buffer;
}

/** `name` prefixes the codes: "root_ca_crl" or "pck_crl". */
export function parseCrl(der: Buffer, name: string): Crl {
  try {
    const [tbsNode, algorithm, signatureBits] = children(
      expectTag(parseDer(der), DER_TAG.sequence, "CertificateList"),
    );
    const tbsFields = children(expectTag(tbsNode, DER_TAG.sequence, "TBSCertList"));
    // version is OPTIONAL (v2 when present), then signature, issuer, thisUpdate, nextUpdate.
    if (tbsFields[0]?.tag === DER_TAG.integer) tbsFields.shift();
    const [, , thisUpdate, nextUpdate, maybeRevoked] = tbsFields;
    if (!nextUpdate || (nextUpdate.tag !== DER_TAG.utcTime && nextUpdate.tag !== 0x18)) {
      // Intel's CRLs always carry nextUpdate; one without would never expire.
      throw new Error("no nextUpdate");
    }
    const revokedSerials = new Set<string>();
    if (maybeRevoked?.tag === DER_TAG.sequence) {
      for (const entry of children(maybeRevoked)) {
        revokedSerials.add(integerHex(children(entry)[0]!));
      }
    }
    const bits = expectTag(signatureBits, DER_TAG.bitString, "signature").value;
    if (bits[0] !== 0) throw new Error("signature with unused bits");
    return {
      thisUpdate: derTime(thisUpdate as DerNode),
      nextUpdate: derTime(nextUpdate),
      revokedSerials,
      tbs: Buffer.from(tbsNode!.raw),
      signatureAlgorithm: oidString(children(algorithm as DerNode)[0]!),
      signature: Buffer.from(bits.subarray(1)),
    };
  } catch (error) {
    if (error instanceof Error && error.name === "DcapChainError") throw error;
    throw chainError(`${name}_malformed`, `the ${name.replace(/_/g, " ")} does not parse`);
  }
}

/** Throws unless the CRL is signed by `issuerKey` and current at `now`. */
export function checkCrl(crl: Crl, issuerKey: KeyObject, now: Date, name: string): void {
  const label = name.replace(/_/g, " ");
  let valid = false;
  try {
    valid =
      crl.signatureAlgorithm === ECDSA_WITH_SHA256 &&
      verify("sha256", crl.tbs, issuerKey, crl.signature);
  } catch {
    valid = false;
  }
  if (!valid) {
    throw chainError(`${name}_signature_invalid`, `the ${label} is not signed by its CA`);
  }
  if (now < crl.thisUpdate || now > crl.nextUpdate) {
    throw chainError(
      `${name}_expired`,
      `the ${label} is valid ${crl.thisUpdate.toISOString()} to ${crl.nextUpdate.toISOString()}, ` +
        `not at ${now.toISOString()}`,
    );
  }
}
