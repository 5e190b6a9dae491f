import { sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import { devKey, sampleReportData } from "./_test-quotes.js";
import { devVerifier } from "./dev-verifier.js";
import { TdxQuoteError, type TdxQuoteErrorCode } from "./quote-error.js";
import {
  MAX_TDX_QUOTE_BYTES,
  parseTdxQuote,
  serializeTdxQuote,
  type TdxQuoteParts,
} from "./tdx-quote.js";

/** Intel's QE vendor id (939A7233-F79C-4CA9-940A-0DB3957F0607), as a real quote carries it. */
const INTEL_QE_VENDOR_ID = Buffer.from("939a7233f79c4ca9940a0db3957f0607", "hex");

// The quote is laid out here byte for byte from Intel's TDX DCAP Quoting Library API (quote v4),
// with literal offsets, independently of serializeTdxQuote. Every field gets a distinct fill so a
// parser reading from a shifted offset returns the wrong bytes.
const CERT_DATA = Buffer.from("-----BEGIN CERTIFICATE-----hand-made-----END CERTIFICATE-----");
const HAND = {
  // header
  reserved1: [8, 10, 0xa1],
  reserved2: [10, 12, 0xa2],
  userData: [28, 48, 0xa3],
  // TD quote body
  teeTcbSvn: [48, 64, 0xb0],
  mrSeam: [64, 112, 0xb1],
  mrSignerSeam: [112, 160, 0xb2],
  seamAttributes: [160, 168, 0xb3],
  tdAttributes: [168, 176, 0xb4],
  xfam: [176, 184, 0xb5],
  mrTd: [184, 232, 0xb6],
  mrConfigId: [232, 280, 0xb7],
  mrOwner: [280, 328, 0xb8],
  mrOwnerConfig: [328, 376, 0xb9],
  rtmr0: [376, 424, 0xc0],
  rtmr1: [424, 472, 0xc1],
  rtmr2: [472, 520, 0xc2],
  rtmr3: [520, 568, 0xc3],
  reportData: [568, 632, 0xc4],
} as const;
const SIGNATURE_DATA_LENGTH = 64 + 64 + 2 + 4 + CERT_DATA.length;
const TOTAL = 636 + SIGNATURE_DATA_LENGTH;

function handBuiltQuote(options: { signed?: boolean } = {}): Buffer {
  const q = Buffer.alloc(TOTAL);
  q.writeUInt16LE(4, 0); // version
  q.writeUInt16LE(2, 2); // attestation key type: ECDSA-256-with-P-256
  q.writeUInt32LE(0x81, 4); // TEE type: TDX
  INTEL_QE_VENDOR_ID.copy(q, 12); // QE vendor id, 12..28
  for (const [start, end, fill] of Object.values(HAND)) q.fill(fill, start, end);
  q.writeUInt32LE(SIGNATURE_DATA_LENGTH, 632);
  q.fill(0xd1, 636, 700); // signature r||s
  q.fill(0xd2, 700, 764); // attestation key x||y
  q.writeUInt16LE(5, 764); // certification data type: PCK certificate chain
  q.writeUInt32LE(CERT_DATA.length, 766);
  CERT_DATA.copy(q, 770);
  if (options.signed) {
    devKey.publicKeyRaw.copy(q, 700);
    const signature = sign("sha256", q.subarray(0, 632), {
      key: devKey.privateKeyPem,
      dsaEncoding: "ieee-p1363",
    });
    signature.copy(q, 636);
  }
  return q;
}

function refusalCode(bytes: Buffer): TdxQuoteErrorCode | "parsed" {
  try {
    parseTdxQuote(bytes);
    return "parsed";
  } catch (error) {
    if (error instanceof TdxQuoteError) return error.code;
    throw error;
  }
}

const filled = (size: number, fill: number) => Buffer.alloc(size, fill);

describe("parseTdxQuote on a hand-built v4 quote", () => {
  it("reads every header, body and signature field from its documented offset", () => {
    const quote = parseTdxQuote(handBuiltQuote());

    expect(quote.header).toEqual({
      version: 4,
      attestationKeyType: 2,
      teeType: 0x81,
      reserved1: filled(2, 0xa1),
      reserved2: filled(2, 0xa2),
      qeVendorId: Buffer.from("939a7233f79c4ca9940a0db3957f0607", "hex"),
      userData: filled(20, 0xa3),
    });
    expect(quote.body).toEqual({
      teeTcbSvn: filled(16, 0xb0),
      mrSeam: filled(48, 0xb1),
      mrSignerSeam: filled(48, 0xb2),
      seamAttributes: filled(8, 0xb3),
      tdAttributes: filled(8, 0xb4),
      xfam: filled(8, 0xb5),
      mrTd: filled(48, 0xb6),
      mrConfigId: filled(48, 0xb7),
      mrOwner: filled(48, 0xb8),
      mrOwnerConfig: filled(48, 0xb9),
      rtmrs: [filled(48, 0xc0), filled(48, 0xc1), filled(48, 0xc2), filled(48, 0xc3)],
      reportData: filled(64, 0xc4),
    });
    expect(quote.signatureData).toEqual({
      signature: filled(64, 0xd1),
      attestationKey: filled(64, 0xd2),
      certificationDataType: 5,
      certificationData: CERT_DATA,
    });
    expect(quote.measurement).toBe("b6".repeat(48));
    expect(quote.signedBytes).toEqual(handBuiltQuote().subarray(0, 632));
  });

  it("agrees with the signing code: a hand-laid quote signed over bytes 0..632 verifies", async () => {
    const quote = handBuiltQuote({ signed: true });
    const verdict = await devVerifier().verify(quote, {
      reportData: filled(64, 0xc4),
      measurements: ["b6".repeat(48)],
    });
    expect(verdict.status).toBe("verified");
  });

  it("returns copies: mutating the input afterwards does not change the parsed quote", () => {
    const bytes = handBuiltQuote();
    const quote = parseTdxQuote(bytes);
    bytes.fill(0, 184, 232);
    expect(quote.measurement).toBe("b6".repeat(48));
  });
});

describe("parseTdxQuote refusals", () => {
  it("refuses every strict prefix as quote_truncated (each header byte, each field boundary)", () => {
    const quote = handBuiltQuote();
    const boundaries = [
      0,
      2,
      4,
      8,
      10,
      12,
      28,
      48,
      64,
      112,
      160,
      168,
      176,
      184,
      232,
      280,
      328,
      376,
      424,
      472,
      520,
      568,
      632,
      636,
      700,
      764,
      766,
      770,
      TOTAL - 1,
    ];
    for (const length of boundaries) {
      expect([length, refusalCode(quote.subarray(0, length))]).toEqual([length, "quote_truncated"]);
    }
    for (let length = 0; length < TOTAL; length += 1) {
      expect([length, refusalCode(quote.subarray(0, length))]).toEqual([length, "quote_truncated"]);
    }
    expect(refusalCode(quote)).toBe("parsed");
  });

  it("refuses trailing bytes other than zero padding", () => {
    const quote = Buffer.concat([handBuiltQuote(), Buffer.from([0, 0, 1])]);
    expect(refusalCode(quote)).toBe("quote_length_mismatch");
    // The QE's fixed-size buffer pads real quotes with zeros: that is not a trailer.
    const padded = Buffer.concat([handBuiltQuote(), Buffer.alloc(70)]);
    expect(refusalCode(padded)).toBe("parsed");
    expect(parseTdxQuote(padded).signatureData.certificationData).toEqual(
      parseTdxQuote(handBuiltQuote()).signatureData.certificationData,
    );
  });

  it("refuses a quote signature data length that disagrees with the bytes", () => {
    const shorter = handBuiltQuote();
    shorter.writeUInt32LE(SIGNATURE_DATA_LENGTH - 1, 632);
    expect(refusalCode(shorter)).toBe("quote_length_mismatch");

    // Declaring more than is present is indistinguishable from a cut quote.
    const longer = handBuiltQuote();
    longer.writeUInt32LE(SIGNATURE_DATA_LENGTH + 1, 632);
    expect(refusalCode(longer)).toBe("quote_truncated");

    const huge = handBuiltQuote();
    huge.writeUInt32LE(0xffffffff, 632);
    expect(refusalCode(huge)).toBe("quote_truncated");

    // A length too small to hold signature, key and certification header, with exactly that
    // many bytes present.
    const tiny = Buffer.alloc(636 + 10);
    handBuiltQuote().copy(tiny, 0, 0, 632);
    tiny.writeUInt32LE(10, 632);
    expect(refusalCode(tiny)).toBe("quote_length_mismatch");
  });

  it("refuses a certification data size that disagrees with the signature data length", () => {
    for (const size of [CERT_DATA.length - 1, CERT_DATA.length + 1, 0, 0xffffffff]) {
      const quote = handBuiltQuote();
      quote.writeUInt32LE(size, 766);
      expect([size, refusalCode(quote)]).toEqual([size, "quote_length_mismatch"]);
    }
  });

  it("refuses other versions, key types and TEE types with their own codes", () => {
    for (const version of [0, 3, 5, 0x0400]) {
      const quote = handBuiltQuote();
      quote.writeUInt16LE(version, 0);
      expect(refusalCode(quote)).toBe("quote_version_unsupported");
    }
    for (const keyType of [0, 1, 3]) {
      const quote = handBuiltQuote();
      quote.writeUInt16LE(keyType, 2);
      expect(refusalCode(quote)).toBe("quote_key_type_unsupported");
    }
    for (const teeType of [0x00, 0x80, 0x81000000]) {
      const quote = handBuiltQuote();
      quote.writeUInt32LE(teeType, 4);
      expect(refusalCode(quote)).toBe("quote_tee_type_unsupported");
    }
  });

  it("refuses oversized input before parsing it", () => {
    expect(refusalCode(Buffer.alloc(MAX_TDX_QUOTE_BYTES + 1))).toBe("quote_too_large");
  });
});

describe("serializeTdxQuote", () => {
  it("is the inverse of parseTdxQuote, byte for byte", () => {
    const bytes = handBuiltQuote({ signed: true });
    const parsed = parseTdxQuote(bytes);
    expect(serializeTdxQuote(parsed)).toEqual(bytes);
  });

  it("round-trips parts through bytes and back", () => {
    const parts: TdxQuoteParts = {
      header: {
        reserved1: filled(2, 1),
        reserved2: filled(2, 2),
        qeVendorId: filled(16, 3),
        userData: filled(20, 4),
      },
      body: {
        teeTcbSvn: filled(16, 5),
        mrSeam: filled(48, 6),
        mrSignerSeam: filled(48, 7),
        seamAttributes: filled(8, 8),
        tdAttributes: filled(8, 9),
        xfam: filled(8, 10),
        mrTd: filled(48, 11),
        mrConfigId: filled(48, 12),
        mrOwner: filled(48, 13),
        mrOwnerConfig: filled(48, 14),
        rtmrs: [filled(48, 15), filled(48, 16), filled(48, 17), filled(48, 18)],
        reportData: sampleReportData(),
      },
      signatureData: {
        signature: filled(64, 19),
        attestationKey: filled(64, 20),
        certificationDataType: 6,
        certificationData: Buffer.alloc(0),
      },
    };
    const parsed = parseTdxQuote(serializeTdxQuote(parts));
    expect(parsed.header).toEqual({
      version: 4,
      attestationKeyType: 2,
      teeType: 0x81,
      ...parts.header,
    });
    expect(parsed.body).toEqual(parts.body);
    expect(parsed.signatureData).toEqual(parts.signatureData);
  });

  it("refuses fields of the wrong size instead of writing a shifted layout", () => {
    const parsed = parseTdxQuote(handBuiltQuote());
    expect(() =>
      serializeTdxQuote({ ...parsed, body: { ...parsed.body, mrTd: filled(47, 0) } }),
    ).toThrow(RangeError);
    expect(() =>
      serializeTdxQuote({
        ...parsed,
        signatureData: { ...parsed.signatureData, signature: filled(65, 0) },
      }),
    ).toThrow(RangeError);
  });
});
