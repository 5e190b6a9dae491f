// The collateral one TDX quote is checked against, shaped like Intel's PCS v4 answers so a
// PCCS client fills it with what the wire carries, untouched: the signed JSON bodies verbatim
// (the signature covers their exact bytes), the issuer chains from the response headers, the
// CRLs as DER.

export interface DcapCollateral {
  /** GET /tdx/certification/v4/tcb?fmspc=…: the body, `{"tcbInfo":{…},"signature":"…"}`. */
  readonly tcbInfoBody: string;
  /** Its `TCB-Info-Issuer-Chain` header, URL-decoded: PEM, TCB signing cert then root. */
  readonly tcbInfoIssuerChain: string;
  /** GET /tdx/certification/v4/qe/identity: `{"enclaveIdentity":{…},"signature":"…"}`. */
  readonly qeIdentityBody: string;
  /** Its `SGX-Enclave-Identity-Issuer-Chain` header, URL-decoded PEM. */
  readonly qeIdentityIssuerChain: string;
  /** GET /sgx/certification/v4/pckcrl?ca=platform|processor&encoding=der. */
  readonly pckCrl: Buffer;
  /** Its `SGX-PCK-CRL-Issuer-Chain` header, URL-decoded PEM: the PCK CA then root. */
  readonly pckCrlIssuerChain: string;
  /** Intel's SGX Root CA CRL, DER (PCCS: GET /sgx/certification/v4/rootcacrl). */
  readonly rootCaCrl: Buffer;
}
