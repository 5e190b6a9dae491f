// Development attestation: a quote with the real TDX v4 byte layout, signed by a development
// P-256 key instead of a TDX Quoting Enclave. It exercises exactly the code paths a hardware
// quote does (parsing, signature, report_data binding, measurement allow-list), so the review
// flow can run end to end on any machine.
//
// It proves NOTHING about confidentiality. The shipped development key is published in this
// repository (dev-keys/dev-attestation-key.pem), so anyone can forge a development quote with any
// measurement and any report_data. That is why the development verifier reports
// `confidential: false`.

import { createPrivateKey, createPublicKey, type KeyObject, sign } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { rawP256PublicKey } from "./attestation-key.js";
import { REPORT_DATA_BYTES } from "./quote-verifier.js";
import { serializeSignedPart, serializeTdxQuote, type TdQuoteBody } from "./tdx-quote.js";

/**
 * MRTD of the reference review worker: sha384("platform agent-eval reference review worker v1").
 * With no MEASUREMENT_ALLOWLIST, the development verifier accepts exactly this measurement.
 */
export const DEV_MEASUREMENT =
  "2e9b04689fd44e60b1d4f174c899976b1c829d03500182ae79f2e9d7ed0357dc492b13352931f168c3800a3f2b7a0f43";

/** Certification data type 5 (PCK certificate chain) ... */
export const DEV_CERTIFICATION_DATA_TYPE = 5;
/**
 * ... carrying no certificate at all, only this marker: a DCAP collateral verifier finds no PCK
 * chain and refuses the quote, and a human reading the bytes sees what it is.
 */
export const DEV_CERTIFICATION_DATA = Buffer.from(
  "platform development quote: no PCK certificate chain, signed by a published key",
  "utf8",
);

const DEV_KEY_RELATIVE_PATH = join("dev-keys", "dev-attestation-key.pem");

export interface DevAttestationKey {
  readonly privateKeyPem: string;
  readonly publicKey: KeyObject;
  /** x||y, the 64 bytes a quote carries as its attestation key. */
  readonly publicKeyRaw: Buffer;
}

/**
 * The shipped key sits at the package root, but this module runs from src/attestation/ (tests,
 * tsx) or from a bundled dist/ file: walk up from the module instead of assuming one depth.
 */
export function defaultDevAttestationKeyPath(): string {
  let directory = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 5; depth += 1) {
    const candidate = join(directory, DEV_KEY_RELATIVE_PATH);
    if (existsSync(candidate)) return candidate;
    directory = dirname(directory);
  }
  throw new Error(`the development attestation key (${DEV_KEY_RELATIVE_PATH}) was not found`);
}

export function loadDevAttestationKey(
  path: string = defaultDevAttestationKeyPath(),
): DevAttestationKey {
  return devAttestationKeyFromPem(readFileSync(path, "utf8"));
}

export function devAttestationKeyFromPem(privateKeyPem: string): DevAttestationKey {
  const privateKey = createPrivateKey(privateKeyPem);
  const publicKeyRaw = rawP256PublicKey(privateKey); // also refuses a key that is not P-256
  return { privateKeyPem, publicKey: createPublicKey(privateKey), publicKeyRaw };
}

export interface DevQuoteRequest {
  readonly privateKeyPem: string;
  readonly reportData: Buffer;
  /** 48-byte MRTD as hex; defaults to DEV_MEASUREMENT. */
  readonly mrtd?: string;
  /** RTMR0..3, 48 bytes each as hex; default all zero. */
  readonly rtmrs?: readonly [string, string, string, string];
}

const zeros = (size: number) => Buffer.alloc(size);

function measurementBytes(name: string, hex: string): Buffer {
  if (!/^[0-9a-fA-F]{96}$/.test(hex)) throw new RangeError(`${name} must be 48 bytes of hex`);
  return Buffer.from(hex, "hex");
}

export function signDevQuote(request: DevQuoteRequest): Buffer {
  if (request.reportData.length !== REPORT_DATA_BYTES) {
    throw new RangeError(`reportData must be ${REPORT_DATA_BYTES} bytes`);
  }
  const rtmrs = request.rtmrs?.map((hex, index) => measurementBytes(`rtmr${index}`, hex));
  return signQuoteBody(request.privateKeyPem, {
    ...devQuoteBody(request.reportData),
    mrTd: measurementBytes("mrtd", request.mrtd ?? DEV_MEASUREMENT),
    ...(rtmrs && { rtmrs: rtmrs as [Buffer, Buffer, Buffer, Buffer] }),
  });
}

/** A TD quote body of zeros (RTMRs included) but for DEV_MEASUREMENT and `reportData`. */
export function devQuoteBody(reportData: Buffer): TdQuoteBody {
  return {
    teeTcbSvn: zeros(16),
    mrSeam: zeros(48),
    mrSignerSeam: zeros(48),
    seamAttributes: zeros(8),
    tdAttributes: zeros(8),
    xfam: zeros(8),
    mrTd: Buffer.from(DEV_MEASUREMENT, "hex"),
    mrConfigId: zeros(48),
    mrOwner: zeros(48),
    mrOwnerConfig: zeros(48),
    rtmrs: [zeros(48), zeros(48), zeros(48), zeros(48)],
    reportData: Buffer.from(reportData),
  };
}

/**
 * A TDX v4 quote of `body` signed with the P-256 key `privateKeyPem` (its public key the quote's
 * attestation key), carrying `certificationData` as type 5.
 */
export function signQuoteBody(
  privateKeyPem: string,
  body: TdQuoteBody,
  certificationData: Buffer = DEV_CERTIFICATION_DATA,
): Buffer {
  // The QE vendor id stays zero: a development quote must not pose as one from Intel's QE.
  const header = {
    reserved1: zeros(2),
    reserved2: zeros(2),
    qeVendorId: zeros(16),
    userData: zeros(20),
  };
  const signature = sign("sha256", serializeSignedPart({ header, body }), {
    key: createPrivateKey(privateKeyPem),
    dsaEncoding: "ieee-p1363",
  });
  return serializeTdxQuote({
    header,
    body,
    signatureData: {
      signature,
      attestationKey: devAttestationKeyFromPem(privateKeyPem).publicKeyRaw,
      certificationDataType: DEV_CERTIFICATION_DATA_TYPE,
      certificationData,
    },
  });
}
