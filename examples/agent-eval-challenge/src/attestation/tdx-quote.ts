// The Intel TDX DCAP quote, version 4, as Intel's "TDX DCAP Quoting Library API" lays it out:
//
//   offset  size  field
//   0       48    header: version u16 LE (=4), attestation key type u16 LE (=2, ECDSA-256 with
//                 P-256), TEE type u32 LE (=0x81, TDX), reserved 2 + reserved 2 (QE SVN and
//                 PCE SVN in the SGX v3 quote, unused in v4), QE vendor id 16, user data 20
//   48      584   TD quote body (TD 1.0 report body, see BODY_FIELDS below)
//   632     4     quote signature data length u32 LE
//   636     n     quote signature data: ECDSA signature 64 (r||s over header||body), ECDSA
//                 attestation public key 64 (x||y), certification data type u16 LE,
//                 certification data size u32 LE, certification data
//
// The parser is strict: every length must be consumed exactly, nothing but zero padding may
// trail. Fields that
// are not interpreted here (reserved bytes, vendor id, certification data) are still covered by
// the signature or by the chain of trust, so they are returned as raw bytes, not checked.

import { TdxQuoteError } from "./quote-error.js";

export const TDX_QUOTE_VERSION = 4;
export const ATTESTATION_KEY_TYPE_ECDSA_P256 = 2;
export const TEE_TYPE_TDX = 0x00000081;

export const QUOTE_HEADER_BYTES = 48;
export const TD_QUOTE_BODY_BYTES = 584;
export const SIGNATURE_DATA_LENGTH_OFFSET = QUOTE_HEADER_BYTES + TD_QUOTE_BODY_BYTES;
export const SIGNATURE_DATA_OFFSET = SIGNATURE_DATA_LENGTH_OFFSET + 4;
const ECDSA_SIGNATURE_BYTES = 64;
const ECDSA_PUBLIC_KEY_BYTES = 64;
const CERTIFICATION_HEADER_BYTES = 2 + 4;
const SIGNATURE_DATA_FIXED_BYTES =
  ECDSA_SIGNATURE_BYTES + ECDSA_PUBLIC_KEY_BYTES + CERTIFICATION_HEADER_BYTES;
/**
 * Real quotes are a few KiB (the PCK certificate chain dominates). The cap bounds the work an
 * unauthenticated sender can cause; it is far above any quote Intel's QE produces.
 */
export const MAX_TDX_QUOTE_BYTES = 64 * 1024;

export interface TdxQuoteHeader {
  readonly version: number;
  readonly attestationKeyType: number;
  readonly teeType: number;
  /** Bytes 8..10: QE SVN in SGX quotes, reserved in TDX v4. */
  readonly reserved1: Buffer;
  /** Bytes 10..12: PCE SVN in SGX quotes, reserved in TDX v4. */
  readonly reserved2: Buffer;
  readonly qeVendorId: Buffer;
  readonly userData: Buffer;
}

export interface TdQuoteBody {
  readonly teeTcbSvn: Buffer;
  readonly mrSeam: Buffer;
  readonly mrSignerSeam: Buffer;
  readonly seamAttributes: Buffer;
  readonly tdAttributes: Buffer;
  readonly xfam: Buffer;
  /** The measurement of the TD's initial contents: what allow-lists name. */
  readonly mrTd: Buffer;
  readonly mrConfigId: Buffer;
  readonly mrOwner: Buffer;
  readonly mrOwnerConfig: Buffer;
  readonly rtmrs: readonly [Buffer, Buffer, Buffer, Buffer];
  readonly reportData: Buffer;
}

export interface TdxQuoteSignatureData {
  /** ECDSA P-256 signature r||s (IEEE P1363) over header||body. */
  readonly signature: Buffer;
  /** The attestation public key x||y (uncompressed point without the 0x04 prefix). */
  readonly attestationKey: Buffer;
  readonly certificationDataType: number;
  readonly certificationData: Buffer;
}

/** What serializeTdxQuote needs; the constant header fields are written by the serializer. */
export interface TdxQuoteParts {
  readonly header: Pick<TdxQuoteHeader, "reserved1" | "reserved2" | "qeVendorId" | "userData">;
  readonly body: TdQuoteBody;
  readonly signatureData: TdxQuoteSignatureData;
}

export interface ParsedTdxQuote {
  readonly header: TdxQuoteHeader;
  readonly body: TdQuoteBody;
  readonly signatureData: TdxQuoteSignatureData;
  /** header||body: the exact bytes the attestation key signed. */
  readonly signedBytes: Buffer;
  /** MRTD as lowercase hex (96 characters). */
  readonly measurement: string;
}

export type BodyFieldName =
  | Exclude<keyof TdQuoteBody, "rtmrs">
  | "rtmr0"
  | "rtmr1"
  | "rtmr2"
  | "rtmr3";

/** The TD quote body in order; sizes sum to TD_QUOTE_BODY_BYTES. */
export const BODY_FIELDS: readonly { readonly name: BodyFieldName; readonly size: number }[] = [
  { name: "teeTcbSvn", size: 16 },
  { name: "mrSeam", size: 48 },
  { name: "mrSignerSeam", size: 48 },
  { name: "seamAttributes", size: 8 },
  { name: "tdAttributes", size: 8 },
  { name: "xfam", size: 8 },
  { name: "mrTd", size: 48 },
  { name: "mrConfigId", size: 48 },
  { name: "mrOwner", size: 48 },
  { name: "mrOwnerConfig", size: 48 },
  { name: "rtmr0", size: 48 },
  { name: "rtmr1", size: 48 },
  { name: "rtmr2", size: 48 },
  { name: "rtmr3", size: 48 },
  { name: "reportData", size: 64 },
];

const truncated = (what: string, need: number, have: number) =>
  new TdxQuoteError(
    "quote_truncated",
    `quote truncated in ${what}: needs ${need} bytes, has ${have}`,
  );

// Copies, so a caller that reuses its input buffer cannot change a parsed quote afterwards.
const copy = (bytes: Buffer, start: number, size: number) =>
  Buffer.from(bytes.subarray(start, start + size));

export function parseTdxQuote(bytes: Buffer): ParsedTdxQuote {
  if (bytes.length > MAX_TDX_QUOTE_BYTES) {
    throw new TdxQuoteError(
      "quote_too_large",
      `quote is ${bytes.length} bytes, the limit is ${MAX_TDX_QUOTE_BYTES}`,
    );
  }
  if (bytes.length < QUOTE_HEADER_BYTES)
    throw truncated("header", QUOTE_HEADER_BYTES, bytes.length);

  const header: TdxQuoteHeader = {
    version: bytes.readUInt16LE(0),
    attestationKeyType: bytes.readUInt16LE(2),
    teeType: bytes.readUInt32LE(4),
    reserved1: copy(bytes, 8, 2),
    reserved2: copy(bytes, 10, 2),
    qeVendorId: copy(bytes, 12, 16),
    userData: copy(bytes, 28, 20),
  };
  if (header.version !== TDX_QUOTE_VERSION) {
    throw new TdxQuoteError(
      "quote_version_unsupported",
      `quote version ${header.version} is not supported (only ${TDX_QUOTE_VERSION})`,
    );
  }
  if (header.attestationKeyType !== ATTESTATION_KEY_TYPE_ECDSA_P256) {
    throw new TdxQuoteError(
      "quote_key_type_unsupported",
      `attestation key type ${header.attestationKeyType} is not supported (only 2, ECDSA P-256)`,
    );
  }
  if (header.teeType !== TEE_TYPE_TDX) {
    throw new TdxQuoteError(
      "quote_tee_type_unsupported",
      `TEE type 0x${header.teeType.toString(16)} is not TDX (0x81)`,
    );
  }

  if (bytes.length < SIGNATURE_DATA_OFFSET) {
    throw truncated("TD quote body", SIGNATURE_DATA_OFFSET, bytes.length);
  }
  const fields = {} as Record<BodyFieldName, Buffer>;
  let offset = QUOTE_HEADER_BYTES;
  for (const { name, size } of BODY_FIELDS) {
    fields[name] = copy(bytes, offset, size);
    offset += size;
  }
  const { rtmr0, rtmr1, rtmr2, rtmr3, ...named } = fields;
  const body: TdQuoteBody = { ...named, rtmrs: [rtmr0, rtmr1, rtmr2, rtmr3] };

  const signatureDataLength = bytes.readUInt32LE(SIGNATURE_DATA_LENGTH_OFFSET);
  const available = bytes.length - SIGNATURE_DATA_OFFSET;
  if (available < signatureDataLength) {
    throw truncated("quote signature data", signatureDataLength, available);
  }
  // Real TDX quotes arrive in the QE's fixed-size buffer: zero padding after the declared
  // signature data is normal (Intel's own QVL ignores it). Anything else trailing is refused.
  const end = SIGNATURE_DATA_OFFSET + signatureDataLength;
  if (bytes.subarray(end).some((byte) => byte !== 0)) {
    throw new TdxQuoteError(
      "quote_length_mismatch",
      `${available - signatureDataLength} bytes trail the declared quote signature data`,
    );
  }
  if (signatureDataLength < SIGNATURE_DATA_FIXED_BYTES) {
    throw new TdxQuoteError(
      "quote_length_mismatch",
      `quote signature data length ${signatureDataLength} cannot hold the signature, key and ` +
        `certification header (${SIGNATURE_DATA_FIXED_BYTES} bytes)`,
    );
  }
  let cursor = SIGNATURE_DATA_OFFSET;
  const signature = copy(bytes, cursor, ECDSA_SIGNATURE_BYTES);
  cursor += ECDSA_SIGNATURE_BYTES;
  const attestationKey = copy(bytes, cursor, ECDSA_PUBLIC_KEY_BYTES);
  cursor += ECDSA_PUBLIC_KEY_BYTES;
  const certificationDataType = bytes.readUInt16LE(cursor);
  const certificationDataSize = bytes.readUInt32LE(cursor + 2);
  cursor += CERTIFICATION_HEADER_BYTES;
  // The outer length is authoritative: an inner size that disagrees with it is a malformed
  // length field, whichever way it errs.
  if (certificationDataSize !== end - cursor) {
    throw new TdxQuoteError(
      "quote_length_mismatch",
      `certification data size ${certificationDataSize} disagrees with the ${end - cursor} ` +
        "bytes left in the quote signature data",
    );
  }
  const signatureData: TdxQuoteSignatureData = {
    signature,
    attestationKey,
    certificationDataType,
    certificationData: copy(bytes, cursor, certificationDataSize),
  };

  return {
    header,
    body,
    signatureData,
    signedBytes: copy(bytes, 0, SIGNATURE_DATA_LENGTH_OFFSET),
    measurement: body.mrTd.toString("hex"),
  };
}

function exactSize(name: string, value: Buffer, size: number): Buffer {
  if (value.length !== size) {
    throw new RangeError(`${name} must be ${size} bytes, got ${value.length}`);
  }
  return value;
}

/** header||body for the given parts: what the attestation key signs. */
export function serializeSignedPart(parts: Pick<TdxQuoteParts, "header" | "body">): Buffer {
  const header = Buffer.alloc(QUOTE_HEADER_BYTES);
  header.writeUInt16LE(TDX_QUOTE_VERSION, 0);
  header.writeUInt16LE(ATTESTATION_KEY_TYPE_ECDSA_P256, 2);
  header.writeUInt32LE(TEE_TYPE_TDX, 4);
  exactSize("reserved1", parts.header.reserved1, 2).copy(header, 8);
  exactSize("reserved2", parts.header.reserved2, 2).copy(header, 10);
  exactSize("qeVendorId", parts.header.qeVendorId, 16).copy(header, 12);
  exactSize("userData", parts.header.userData, 20).copy(header, 28);

  const { rtmrs, ...named } = parts.body;
  const byName: Record<BodyFieldName, Buffer> = {
    ...named,
    rtmr0: rtmrs[0],
    rtmr1: rtmrs[1],
    rtmr2: rtmrs[2],
    rtmr3: rtmrs[3],
  };
  const body = Buffer.concat(BODY_FIELDS.map((f) => exactSize(f.name, byName[f.name], f.size)));
  return Buffer.concat([header, body]);
}

/** The inverse of parseTdxQuote (the constant header fields are always v4 / P-256 / TDX). */
export function serializeTdxQuote(parts: TdxQuoteParts): Buffer {
  const { signatureData } = parts;
  const certificationHeader = Buffer.alloc(CERTIFICATION_HEADER_BYTES);
  certificationHeader.writeUInt16LE(signatureData.certificationDataType, 0);
  certificationHeader.writeUInt32LE(signatureData.certificationData.length, 2);
  const signatureBytes = Buffer.concat([
    exactSize("signature", signatureData.signature, ECDSA_SIGNATURE_BYTES),
    exactSize("attestationKey", signatureData.attestationKey, ECDSA_PUBLIC_KEY_BYTES),
    certificationHeader,
    signatureData.certificationData,
  ]);
  const length = Buffer.alloc(4);
  length.writeUInt32LE(signatureBytes.length, 0);
  const quote = Buffer.concat([serializeSignedPart(parts), length, signatureBytes]);
  if (quote.length > MAX_TDX_QUOTE_BYTES) {
    throw new RangeError(`quote would be ${quote.length} bytes, over ${MAX_TDX_QUOTE_BYTES}`);
  }
  return quote;
}
