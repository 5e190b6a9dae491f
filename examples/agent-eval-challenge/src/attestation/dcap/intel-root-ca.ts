// Intel's SGX Root CA (CN=Intel SGX Root CA, O=Intel Corporation; serial
// 22650CD65A9D3489F383B49552BF501B392706AC, valid 2018-05-21 to 2049-12-31): the one key every
// DCAP chain ends in (PCK certificates, the TCB info and QE identity signing certificates, both
// CRLs). It is PINNED here, never taken from a quote or from collateral: a chain that ends in any
// other key, however well formed, is refused. Intel publishes the certificate at
// https://certificates.trustedservices.intel.com/Intel_SGX_Provisioning_Certification_RootCA.der
// (sha256 44a0196b2b99f889b8e149e95b807a350e7424964399e885a7cbb8ccfab674d3).

import { createPublicKey, type KeyObject } from "node:crypto";

/** The root's P-256 public key as SubjectPublicKeyInfo DER, base64. */
export const INTEL_SGX_ROOT_CA_SPKI =
  "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEC6nEwMDIYZOj/iPWsCzaEKi71OiOSLRFhWGjbnBVJfVnkY4u3IjkDYYL0MxO4mqsyYjlBalTVYxFP2sJBK5zlA==";

export function intelSgxRootKey(): KeyObject {
  return createPublicKey({
    key: Buffer.from(INTEL_SGX_ROOT_CA_SPKI, "base64"),
    format: "der",
    type: "spki",
  });
}
