import { createHash, createPrivateKey, generateKeyPairSync } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { freshPrivateKeyPem, sampleReportData } from "./_test-quotes.js";
import {
  DEV_CERTIFICATION_DATA,
  DEV_MEASUREMENT,
  defaultDevAttestationKeyPath,
  devAttestationKeyFromPem,
  loadDevAttestationKey,
  signDevQuote,
} from "./dev-quote.js";
import { devVerifier } from "./dev-verifier.js";
import { parseTdxQuote } from "./tdx-quote.js";

describe("development attestation key and quotes", () => {
  it("DEV_MEASUREMENT is sha384 of the reference worker's name", () => {
    const derived = createHash("sha384")
      .update("platform agent-eval reference review worker v1")
      .digest("hex");
    expect(DEV_MEASUREMENT).toBe(derived);
  });

  it("ships the development key as a PKCS#8 PEM P-256 private key", () => {
    const path = defaultDevAttestationKeyPath();
    expect(path.endsWith("dev-keys/dev-attestation-key.pem")).toBe(true);
    const pem = readFileSync(path, "utf8");
    expect(pem.startsWith("-----BEGIN PRIVATE KEY-----")).toBe(true);
    const key = createPrivateKey(pem);
    expect(key.asymmetricKeyType).toBe("ec");
    expect(key.asymmetricKeyDetails?.namedCurve).toBe("prime256v1");
    const loaded = loadDevAttestationKey();
    expect(loaded.publicKeyRaw).toHaveLength(64);
    expect(loaded.privateKeyPem).toBe(pem);
  });

  it("refuses a key that is not P-256", () => {
    const ed = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" });
    expect(() => devAttestationKeyFromPem(ed.toString())).toThrow();
  });

  it("builds a v4 quote carrying the report_data, measurements and the dev public key", () => {
    const pem = freshPrivateKeyPem();
    const reportData = sampleReportData();
    const rtmrs = ["01", "02", "03", "04"].map((b) => b.repeat(48)) as [
      string,
      string,
      string,
      string,
    ];
    const mrtd = "0f".repeat(48);
    const parsed = parseTdxQuote(signDevQuote({ privateKeyPem: pem, reportData, mrtd, rtmrs }));
    expect(parsed.header).toMatchObject({ version: 4, attestationKeyType: 2, teeType: 0x81 });
    expect(parsed.header.qeVendorId).toEqual(Buffer.alloc(16));
    expect(parsed.body.reportData).toEqual(reportData);
    expect(parsed.measurement).toBe(mrtd);
    expect(parsed.body.rtmrs.map((r) => r.toString("hex"))).toEqual(rtmrs);
    expect(parsed.signatureData.attestationKey).toEqual(devAttestationKeyFromPem(pem).publicKeyRaw);
    expect(parsed.signatureData.certificationData).toEqual(DEV_CERTIFICATION_DATA);
  });

  it("defaults MRTD to DEV_MEASUREMENT, so the default dev verifier accepts it", async () => {
    const reportData = sampleReportData(1);
    const quote = signDevQuote({
      privateKeyPem: loadDevAttestationKey().privateKeyPem,
      reportData,
    });
    expect(parseTdxQuote(quote).measurement).toBe(DEV_MEASUREMENT);
    expect((await devVerifier().verify(quote, { reportData, measurements: [] })).status).toBe(
      "verified",
    );
  });

  it("refuses malformed inputs", () => {
    const privateKeyPem = freshPrivateKeyPem();
    expect(() => signDevQuote({ privateKeyPem, reportData: Buffer.alloc(32) })).toThrow(RangeError);
    expect(() => signDevQuote({ privateKeyPem, reportData: Buffer.alloc(64), mrtd: "ab" })).toThrow(
      RangeError,
    );
  });
});
