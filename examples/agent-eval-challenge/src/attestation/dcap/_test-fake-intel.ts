// A counterfeit Intel for the attack tests: a root of our own, a PCK CA, a PCK certificate with
// the real platform's SGX extension, a TCB signing certificate, CRLs, and signed TCB info and QE
// identity, all built here with node:crypto and a few lines of DER. A quote re-signed under it
// is well formed in every byte, so each test isolates one refusal. Private to tests.

import {
  createHash,
  generateKeyPairSync,
  type KeyObject,
  sign,
  X509Certificate,
} from "node:crypto";
import { rawP256PublicKey } from "../attestation-key.js";
import { parseTdxQuote, serializeTdxQuote, type TdQuoteBody } from "../tdx-quote.js";
import { type QvlCollateral, realQuote, realQvlCollateral } from "./_test-fixtures.js";
import { parseQeCertificationData } from "./certification-data.js";
import type { DcapCollateral } from "./collateral.js";
import { pckExtensions } from "./pck-extensions.js";

// --- DER writing -------------------------------------------------------------------------------

const len = (n: number) =>
  n < 0x80
    ? Buffer.from([n])
    : n < 0x100
      ? Buffer.from([0x81, n])
      : Buffer.from([0x82, n >> 8, n & 0xff]);
const tlv = (tag: number, ...parts: Buffer[]) => {
  const value = Buffer.concat(parts);
  return Buffer.concat([Buffer.from([tag]), len(value.length), value]);
};
const seq = (...parts: Buffer[]) => tlv(0x30, ...parts);
const set = (...parts: Buffer[]) => tlv(0x31, ...parts);
const octets = (b: Buffer) => tlv(0x04, b);
const bits = (b: Buffer) => tlv(0x03, Buffer.from([0]), b);
const bool = (v: boolean) => tlv(0x01, Buffer.from([v ? 0xff : 0]));
function int(value: number | Buffer): Buffer {
  const hex = typeof value === "number" ? value.toString(16) : "";
  let b = typeof value === "number" ? Buffer.from(hex.length % 2 ? `0${hex}` : hex, "hex") : value;
  while (b.length > 1 && b[0] === 0 && (b[1]! & 0x80) === 0) b = b.subarray(1);
  if (b[0]! & 0x80) b = Buffer.concat([Buffer.from([0]), b]);
  return tlv(0x02, b);
}
function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split(".").map(Number);
  const out = [40 * a! + b!];
  for (const arc of rest) {
    const chunk = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128))
      chunk.unshift((v & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}
const time = (d: Date) =>
  tlv(0x17, Buffer.from(`${d.toISOString().slice(2, 19).replace(/[-T:]/g, "")}Z`, "latin1"));
const name = (cn: string) =>
  seq(
    set(seq(oid("2.5.4.3"), tlv(0x0c, Buffer.from(cn)))),
    set(seq(oid("2.5.4.10"), tlv(0x0c, Buffer.from("Intel Corporation")))),
  );
const ECDSA_SHA256 = seq(oid("1.2.840.10045.4.3.2"));

// --- Certificates and CRLs ---------------------------------------------------------------------

export interface FakeCa {
  readonly key: KeyObject;
  readonly cert: X509Certificate;
  readonly cn: string;
}

let serialCounter = 0x1000;

export function fakeCert(options: {
  cn: string;
  issuer?: FakeCa;
  ca: boolean;
  notBefore?: Date;
  notAfter?: Date;
  extensions?: Buffer[];
}): FakeCa {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const issuerKey = options.issuer?.key ?? privateKey;
  const issuerName = options.issuer?.cn ?? options.cn;
  const extensions = [
    seq(oid("2.5.29.19"), bool(true), octets(options.ca ? seq(bool(true)) : seq())),
    ...(options.extensions ?? []),
  ];
  const tbs = seq(
    tlv(0xa0, int(2)),
    int(serialCounter++),
    ECDSA_SHA256,
    name(issuerName),
    seq(
      time(options.notBefore ?? new Date("2020-01-01Z")),
      time(options.notAfter ?? new Date("2040-01-01Z")),
    ),
    name(options.cn),
    publicKey.export({ type: "spki", format: "der" }),
    tlv(0xa3, seq(...extensions)),
  );
  const der = seq(tbs, ECDSA_SHA256, bits(sign("sha256", tbs, issuerKey)));
  return { key: privateKey, cert: new X509Certificate(der), cn: options.cn };
}

export function fakeCrl(
  issuer: FakeCa,
  options: { revoked?: string[]; thisUpdate?: Date; nextUpdate?: Date } = {},
): Buffer {
  const revoked = (options.revoked ?? []).map((serial) =>
    seq(
      int(Buffer.from(serial.length % 2 ? `0${serial}` : serial, "hex")),
      time(new Date("2021-01-01Z")),
    ),
  );
  const tbs = seq(
    int(1),
    ECDSA_SHA256,
    name(issuer.cn),
    time(options.thisUpdate ?? new Date("2021-01-01Z")),
    time(options.nextUpdate ?? new Date("2039-01-01Z")),
    ...(revoked.length > 0 ? [seq(...revoked)] : []),
  );
  return seq(tbs, ECDSA_SHA256, bits(sign("sha256", tbs, issuer.key)));
}

/** The real PCK certificate's SGX extension, re-encoded (FMSPC, PCE id, TCB as the platform's). */
function sgxExtension(real: X509Certificate): Buffer {
  const pck = pckExtensions(real);
  const sgx = "1.2.840.113741.1.13.1";
  const tcb = seq(
    ...pck.sgxComponents.map((svn, i) => seq(oid(`${sgx}.2.${i + 1}`), int(svn))),
    seq(oid(`${sgx}.2.17`), int(pck.pceSvn)),
    seq(oid(`${sgx}.2.18`), octets(pck.cpuSvn)),
  );
  const value = seq(
    seq(oid(`${sgx}.1`), octets(Buffer.alloc(16, 7))), // PPID
    seq(oid(`${sgx}.2`), tcb),
    seq(oid(`${sgx}.3`), octets(pck.pceId)),
    seq(oid(`${sgx}.4`), octets(pck.fmspc)),
  );
  return seq(oid(sgx), octets(value));
}

// --- A whole counterfeit Intel, and quotes under it --------------------------------------------

export interface FakeIntel {
  readonly root: FakeCa;
  readonly pckCa: FakeCa;
  readonly pck: FakeCa;
  readonly signer: FakeCa;
  readonly rootKey: KeyObject;
}

export function fakeIntel(): FakeIntel {
  const real = parseQeCertificationData(
    6,
    parseTdxQuote(realQuote()).signatureData.certificationData,
  );
  const root = fakeCert({ cn: "Intel SGX Root CA", ca: true });
  const pckCa = fakeCert({ cn: "Intel SGX PCK Platform CA", issuer: root, ca: true });
  const pck = fakeCert({
    cn: "Intel SGX PCK Certificate",
    issuer: pckCa,
    ca: false,
    extensions: [sgxExtension(real.pckChain[0]!)],
  });
  const signer = fakeCert({ cn: "Intel SGX TCB Signing", issuer: root, ca: false });
  return { root, pckCa, pck, signer, rootKey: root.cert.publicKey };
}

const pem = (...certs: X509Certificate[]) => certs.map((c) => c.toString()).join("");

/** The real quote's header and QE report, re-signed under the fake PCK, body edits allowed. */
export function fakeQuote(intel: FakeIntel, body: Partial<TdQuoteBody> = {}): Buffer {
  const quote = parseTdxQuote(realQuote());
  const real = parseQeCertificationData(6, quote.signatureData.certificationData);
  const { privateKey: attestationKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const rawKey = rawP256PublicKey(attestationKey);
  const qeReport = Buffer.from(real.qeReportBytes);
  qeReport.fill(0, 320);
  createHash("sha256").update(rawKey).update(real.qeAuthData).digest().copy(qeReport, 320);
  const qeSignature = sign("sha256", qeReport, { key: intel.pck.key, dsaEncoding: "ieee-p1363" });
  const chain = Buffer.from(pem(intel.pck.cert, intel.pckCa.cert, intel.root.cert));
  const authSize = Buffer.alloc(2);
  authSize.writeUInt16LE(real.qeAuthData.length);
  const inner = Buffer.alloc(6);
  inner.writeUInt16LE(5, 0);
  inner.writeUInt32LE(chain.length, 2);
  const certificationData = Buffer.concat([
    qeReport,
    qeSignature,
    authSize,
    real.qeAuthData,
    inner,
    chain,
  ]);
  const parts = { header: quote.header, body: { ...quote.body, ...body } };
  const unsigned = serializeTdxQuote({
    ...parts,
    signatureData: {
      signature: Buffer.alloc(64),
      attestationKey: rawKey,
      certificationDataType: 6,
      certificationData,
    },
  });
  const signature = sign("sha256", unsigned.subarray(0, 632), {
    key: attestationKey,
    dsaEncoding: "ieee-p1363",
  });
  signature.copy(unsigned, 636);
  return unsigned;
}

export interface FakeCollateralOptions {
  /** Edits to the real TCB info / QE identity JSON before the fake signer signs it. */
  tcbInfo?: (info: Record<string, unknown>) => void;
  qeIdentity?: (identity: Record<string, unknown>) => void;
  revokedPcks?: string[];
  /** Who signs the TCB info and QE identity (the TCB signing certificate unless told). */
  signer?: FakeCa;
}

/** The real TCB info and QE identity, re-signed by the fake signer, as both shapes. */
export function fakeCollateral(intel: FakeIntel, options: FakeCollateralOptions = {}) {
  const real = realQvlCollateral();
  const tcbInfo = JSON.parse(real.tcb_info);
  options.tcbInfo?.(tcbInfo);
  const qeIdentity = JSON.parse(real.qe_identity);
  options.qeIdentity?.(qeIdentity);
  const tcbRaw = JSON.stringify(tcbInfo);
  const qeRaw = JSON.stringify(qeIdentity);
  const signer = options.signer ?? intel.signer;
  const sig = (raw: string) =>
    sign("sha256", Buffer.from(raw), { key: signer.key, dsaEncoding: "ieee-p1363" }).toString(
      "hex",
    );
  const signerChain = pem(signer.cert, intel.root.cert);
  const qvl: QvlCollateral = {
    pck_crl_issuer_chain: pem(intel.pckCa.cert, intel.root.cert),
    root_ca_crl: fakeCrl(intel.root).toString("hex"),
    pck_crl: fakeCrl(intel.pckCa, { revoked: options.revokedPcks ?? [] }).toString("hex"),
    tcb_info_issuer_chain: signerChain,
    tcb_info: tcbRaw,
    tcb_info_signature: sig(tcbRaw),
    qe_identity_issuer_chain: signerChain,
    qe_identity: qeRaw,
    qe_identity_signature: sig(qeRaw),
  };
  const pcs: DcapCollateral = {
    tcbInfoBody: `{"tcbInfo":${tcbRaw},"signature":"${qvl.tcb_info_signature}"}`,
    tcbInfoIssuerChain: signerChain,
    qeIdentityBody: `{"enclaveIdentity":${qeRaw},"signature":"${qvl.qe_identity_signature}"}`,
    qeIdentityIssuerChain: signerChain,
    pckCrl: Buffer.from(qvl.pck_crl, "hex"),
    pckCrlIssuerChain: qvl.pck_crl_issuer_chain,
    rootCaCrl: Buffer.from(qvl.root_ca_crl, "hex"),
  };
  return { qvl, pcs };
}
