import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { devKey, freshPrivateKeyPem, sampleReportData } from "./_test-quotes.js";
import { DEV_MEASUREMENT, devAttestationKeyFromPem, signDevQuote } from "./dev-quote.js";
import { devVerifier } from "./dev-verifier.js";
import type { QuoteVerdict } from "./quote-verifier.js";

const reportData = sampleReportData();
const expected = { reportData, measurements: [] as string[] };
const verifier = devVerifier();
const devQuote = () => signDevQuote({ privateKeyPem: devKey.privateKeyPem, reportData });
const otherMeasurement = createHash("sha384").update("some other worker").digest("hex");

const codeOf = (verdict: QuoteVerdict) =>
  verdict.status === "verified" ? "verified" : verdict.code;

function flipped(quote: Buffer, offset: number, bit = 0): Buffer {
  const copy = Buffer.from(quote);
  copy[offset]! ^= 1 << bit;
  return copy;
}

describe("devVerifier", () => {
  it("says what it is: a development verifier, not confidential", () => {
    expect(verifier.kind).toBe("dev");
    expect(verifier.confidential).toBe(false);
  });

  it("verifies a development quote bound to the expected report_data and measurement", async () => {
    const verdict = await verifier.verify(devQuote(), expected);
    expect(verdict.status).toBe("verified");
    if (verdict.status !== "verified") return;
    expect(verdict.measurement).toBe(DEV_MEASUREMENT);
    expect(verdict.quote.body.reportData).toEqual(reportData);
  });

  it("rejects a self-consistent quote signed by any other key (the forger's own key)", async () => {
    const forged = signDevQuote({ privateKeyPem: freshPrivateKeyPem(), reportData });
    const verdict = await verifier.verify(forged, expected);
    expect(verdict).toMatchObject({ status: "rejected", code: "quote_attestation_key_untrusted" });
  });

  it("rejects the dev key's quote when configured to trust another key", async () => {
    const other = devAttestationKeyFromPem(freshPrivateKeyPem());
    const verdict = await devVerifier({ publicKey: other.publicKey }).verify(devQuote(), expected);
    expect(codeOf(verdict)).toBe("quote_attestation_key_untrusted");
  });

  it("rejects a dev-key quote whose signature was replaced (key swapped in, signature kept)", async () => {
    const forgedPem = freshPrivateKeyPem();
    const forged = signDevQuote({ privateKeyPem: forgedPem, reportData, mrtd: otherMeasurement });
    devKey.publicKeyRaw.copy(forged, 700); // claim the trusted key, keep the forger's signature
    expect(codeOf(await verifier.verify(forged, expected))).toBe("quote_signature_invalid");
  });

  it("rejects every single-bit flip in the header with the code of the field hit", async () => {
    const quote = devQuote();
    for (let offset = 0; offset < 48; offset += 1) {
      for (const bit of [0, 7]) {
        const code = codeOf(await verifier.verify(flipped(quote, offset, bit), expected));
        const want =
          offset < 2
            ? "quote_version_unsupported"
            : offset < 4
              ? "quote_key_type_unsupported"
              : offset < 8
                ? "quote_tee_type_unsupported"
                : "quote_signature_invalid"; // reserved, vendor id, user data: signed bytes
        expect([offset, bit, code]).toEqual([offset, bit, want]);
      }
    }
  });

  it("rejects every single-bit flip in the TD quote body, report_data included", async () => {
    const quote = devQuote();
    for (let offset = 48; offset < 632; offset += 1) {
      const code = codeOf(await verifier.verify(flipped(quote, offset), expected));
      expect([offset, code]).toEqual([offset, "quote_signature_invalid"]);
    }
  });

  it("rejects every single-bit flip in the signature", async () => {
    const quote = devQuote();
    for (let offset = 636; offset < 700; offset += 1) {
      const code = codeOf(await verifier.verify(flipped(quote, offset), expected));
      expect([offset, code]).toEqual([offset, "quote_signature_invalid"]);
    }
  });

  it("rejects every single-bit flip in the attestation key as an untrusted key", async () => {
    const quote = devQuote();
    for (let offset = 700; offset < 764; offset += 1) {
      const code = codeOf(await verifier.verify(flipped(quote, offset), expected));
      expect([offset, code]).toEqual([offset, "quote_attestation_key_untrusted"]);
    }
  });

  it("rejects a validly signed quote bound to other report_data (replay for another report)", async () => {
    const otherBinding = sampleReportData(99);
    const replayed = signDevQuote({
      privateKeyPem: devKey.privateKeyPem,
      reportData: otherBinding,
    });
    expect(codeOf(await verifier.verify(replayed, expected))).toBe("report_data_mismatch");
    // The zero padding is part of the binding: a difference in the last byte alone is refused.
    const lastByte = Buffer.from(reportData);
    lastByte[63]! ^= 1;
    const padded = signDevQuote({ privateKeyPem: devKey.privateKeyPem, reportData: lastByte });
    expect(codeOf(await verifier.verify(padded, expected))).toBe("report_data_mismatch");
  });

  it("rejects a measurement outside the default allow-list and honours an explicit one", async () => {
    const quote = signDevQuote({
      privateKeyPem: devKey.privateKeyPem,
      reportData,
      mrtd: otherMeasurement,
    });
    expect(codeOf(await verifier.verify(quote, expected))).toBe("measurement_not_allowed");

    const allowing = { reportData, measurements: [otherMeasurement.toUpperCase()] };
    expect(codeOf(await verifier.verify(quote, allowing))).toBe("verified");
    // An explicit list replaces the default: the reference measurement is no longer accepted.
    expect(codeOf(await verifier.verify(devQuote(), allowing))).toBe("measurement_not_allowed");

    const configured = devVerifier({ measurements: [otherMeasurement] });
    expect(codeOf(await configured.verify(quote, expected))).toBe("verified");
    expect(codeOf(await configured.verify(devQuote(), expected))).toBe("measurement_not_allowed");
  });

  it("rejects malformed bytes with the parser's code instead of throwing", async () => {
    expect(codeOf(await verifier.verify(devQuote().subarray(0, 700), expected))).toBe(
      "quote_truncated",
    );
    expect(codeOf(await verifier.verify(Buffer.alloc(0), expected))).toBe("quote_truncated");
  });

  it("refuses a caller mistake (report_data not 64 bytes, malformed allow-list) loudly", async () => {
    await expect(
      verifier.verify(devQuote(), { reportData: reportData.subarray(0, 32), measurements: [] }),
    ).rejects.toThrow(RangeError);
    await expect(
      verifier.verify(devQuote(), { reportData, measurements: ["not-hex"] }),
    ).rejects.toThrow(RangeError);
    expect(() => devVerifier({ measurements: ["abc"] })).toThrow(RangeError);
  });
});
