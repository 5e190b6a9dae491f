// The quote's certification data (type 6 in a TDX v4 quote): the Quoting Enclave's own report,
// its signature by the PCK key, the QE authentication data, and the nested certification data
// that carries the PCK certificate chain as PEM (type 5). Strictly parsed: every length must be
// consumed exactly.

import { X509Certificate } from "node:crypto";
import { chainError } from "./dcap-error.js";
import { ENCLAVE_REPORT_BYTES, type EnclaveReport, parseEnclaveReport } from "./enclave-report.js";

export const CERTIFICATION_QE_REPORT = 6;
export const CERTIFICATION_PCK_CHAIN = 5;
const QE_REPORT_SIGNATURE_BYTES = 64;

export interface QeCertificationData {
  /** The 384 raw bytes the PCK key signed. */
  readonly qeReportBytes: Buffer;
  readonly qeReport: EnclaveReport;
  /** ECDSA P-256 r||s over qeReportBytes by the PCK certificate's key. */
  readonly qeReportSignature: Buffer;
  readonly qeAuthData: Buffer;
  /** The PCK certificate chain, leaf first (as the quote carries it). */
  readonly pckChain: readonly X509Certificate[];
}

const malformed = (message: string) => chainError("certification_data_malformed", message);

export function parseQeCertificationData(type: number, data: Buffer): QeCertificationData {
  if (type !== CERTIFICATION_QE_REPORT) {
    throw chainError(
      "certification_data_type_unsupported",
      `certification data type ${type} is not the QE report certification data (6)`,
    );
  }
  const fixed = ENCLAVE_REPORT_BYTES + QE_REPORT_SIGNATURE_BYTES + 2;
  if (data.length < fixed) throw malformed("certification data truncated in the QE report");
  const qeReportBytes = Buffer.from(data.subarray(0, ENCLAVE_REPORT_BYTES));
  const qeReportSignature = Buffer.from(data.subarray(ENCLAVE_REPORT_BYTES, fixed - 2));
  const authSize = data.readUInt16LE(fixed - 2);
  let cursor = fixed;
  if (data.length < cursor + authSize + 6) {
    throw malformed("certification data truncated in the QE authentication data");
  }
  const qeAuthData = Buffer.from(data.subarray(cursor, cursor + authSize));
  cursor += authSize;
  const innerType = data.readUInt16LE(cursor);
  const innerSize = data.readUInt32LE(cursor + 2);
  cursor += 6;
  if (innerSize !== data.length - cursor) {
    throw malformed(`inner certification data size ${innerSize} disagrees with its bytes`);
  }
  if (innerType !== CERTIFICATION_PCK_CHAIN) {
    throw chainError(
      "certification_data_type_unsupported",
      `inner certification data type ${innerType} is not a PCK certificate chain (5)`,
    );
  }
  return {
    qeReportBytes,
    qeReport: parseEnclaveReport(qeReportBytes),
    qeReportSignature,
    qeAuthData,
    pckChain: parsePemChain(data.subarray(cursor).toString("latin1"), "pck_chain_malformed"),
  };
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+?-----END CERTIFICATE-----/g;

/**
 * Certificates from concatenated PEM, in order. The QE pads the chain with NULs; anything else
 * outside the PEM blocks is refused, so no bytes of the signed chain go unexamined.
 */
export function parsePemChain(text: string, code: string): X509Certificate[] {
  const blocks = text.match(PEM_CERTIFICATE) ?? [];
  const rest = text.replace(PEM_CERTIFICATE, "").replace(/[\s\0]/g, "");
  if (blocks.length === 0 || rest.length > 0) {
    throw chainError(code, "the certificate chain is not a sequence of PEM certificates");
  }
  try {
    return blocks.map(checkedCertificate);
  } catch {
    throw chainError(code, "a certificate in the chain does not parse");
  }
}

/**
 * node parses a certificate's parts lazily: read every part the chain uses now, so a damaged
 * one is a malformed chain here rather than an exception later. Intel's keys are all P-256.
 */
function checkedCertificate(pem: string): X509Certificate {
  const cert = new X509Certificate(pem);
  const key = cert.publicKey;
  const dates = [new Date(cert.validFrom), new Date(cert.validTo)];
  if (
    key.asymmetricKeyType !== "ec" ||
    key.asymmetricKeyDetails?.namedCurve !== "prime256v1" ||
    dates.some((d) => Number.isNaN(d.getTime())) ||
    !cert.serialNumber ||
    typeof cert.subject !== "string"
  ) {
    throw new Error("unusable certificate");
  }
  return cert;
}
