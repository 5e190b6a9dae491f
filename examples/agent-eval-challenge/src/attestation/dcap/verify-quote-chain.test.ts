import { generateKeyPairSync, sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import { rawP256PublicKey } from "../attestation-key.js";
import { parseTdxQuote } from "../tdx-quote.js";
import { fakeCert, fakeCollateral, fakeIntel, fakeQuote } from "./_test-fake-intel.js";
import { FIXTURE_TIME, realCollateral, realQuote } from "./_test-fixtures.js";
import type { DcapCollateral } from "./collateral.js";
import { DcapChainError } from "./dcap-error.js";
import { verifyQuoteChain } from "./verify-quote-chain.js";

/** The refusal code of verifying these bytes, or the TCB status when the chain holds. */
function outcome(
  bytes: Buffer,
  collateral: DcapCollateral = realCollateral(),
  options: { now?: Date; rootKey?: import("node:crypto").KeyObject } = {},
): string {
  try {
    const tcb = verifyQuoteChain(parseTdxQuote(bytes), collateral, {
      now: options.now ?? FIXTURE_TIME,
      rootKey: options.rootKey,
    });
    return `ok:${tcb.status}:${tcb.advisoryIds.join(",")}`;
  } catch (error) {
    if (error instanceof DcapChainError) return error.code;
    throw error;
  }
}

// Offsets inside the real quote's certification data (type 6), from SIGNATURE_DATA_OFFSET 636:
// signature 64, attestation key 64, type 2, size 4, then the QE report (384), its signature
// (64), the QE auth data size (2) and data, the inner type and size (6), the PCK chain PEM.
const CERT_DATA = 636 + 64 + 64 + 6;
const QE_REPORT = CERT_DATA;
const QE_AUTH = CERT_DATA + 384 + 64 + 2;

function flipped(offset: number, bit = 0): Buffer {
  const bytes = realQuote();
  bytes[offset]! ^= 1 << bit;
  return bytes;
}

describe("verifyQuoteChain on a real TDX quote with its real collateral", () => {
  it("verifies the chain to Intel's pinned root: UpToDate, no advisories", () => {
    expect(outcome(realQuote())).toBe("ok:UpToDate:");
  });

  it("refuses a flipped bit in the QE report (signed by the PCK key)", () => {
    expect(outcome(flipped(QE_REPORT + 100))).toBe("qe_report_signature_invalid");
  });

  it("refuses a flipped bit in the QE authentication data (bound by the QE report)", () => {
    expect(outcome(flipped(QE_AUTH + 3))).toBe("qe_report_binding_mismatch");
  });

  it("refuses a flipped bit in the PCK certificate carried in the certification data", () => {
    const bytes = realQuote();
    const chainStart = bytes.indexOf("-----BEGIN CERTIFICATE-----", QE_AUTH);
    const leafEnd = bytes.indexOf("-----END CERTIFICATE-----", chainStart);
    // A base64 letter inside the leaf's signature value whose low bit flips to another letter:
    // the DER stays well formed, the signature no longer verifies.
    let at = leafEnd - 30;
    while (!/[B-Yb-y]/.test(String.fromCharCode(bytes[at]!))) at--;
    bytes[at]! ^= 1;
    expect(outcome(bytes)).toBe("pck_chain_signature_invalid");
  });

  it("refuses a quote re-signed by another attestation key (not the one the QE report binds)", () => {
    const bytes = realQuote();
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    sign("sha256", bytes.subarray(0, 632), { key: privateKey, dsaEncoding: "ieee-p1363" }).copy(
      bytes,
      636,
    );
    rawP256PublicKey(privateKey).copy(bytes, 700);
    expect(outcome(bytes)).toBe("qe_report_binding_mismatch");
  });

  it("refuses collateral outside its validity windows", () => {
    // Before the PCK CRL was issued, and after the TCB info's and the PCK CRL's next update.
    expect(outcome(realQuote(), realCollateral(), { now: new Date("2025-06-01Z") })).toBe(
      "pck_crl_expired",
    );
    expect(outcome(realQuote(), realCollateral(), { now: new Date("2025-08-01Z") })).toBe(
      "pck_crl_expired",
    );
    expect(outcome(realQuote(), realCollateral(), { now: new Date("2027-01-01Z") })).toBe(
      "root_ca_crl_expired",
    );
  });

  it("refuses TCB info or QE identity whose signature does not cover its bytes", () => {
    const collateral = realCollateral();
    const tamperedTcb = {
      ...collateral,
      tcbInfoBody: collateral.tcbInfoBody.replace(
        '"tcbEvaluationDataNumber":17',
        '"tcbEvaluationDataNumber":18',
      ),
    };
    expect(outcome(realQuote(), tamperedTcb)).toBe("tcb_info_signature_invalid");
    const tamperedQe = {
      ...collateral,
      qeIdentityBody: collateral.qeIdentityBody.replace('"isvprodid":2', '"isvprodid":3'),
    };
    expect(outcome(realQuote(), tamperedQe)).toBe("qe_identity_signature_invalid");
    // A body that repeats the signed member shows one object and signs another.
    const repeated = {
      ...collateral,
      tcbInfoBody: collateral.tcbInfoBody.replace(',"signature"', ',"tcbInfo":{},"signature"'),
    };
    expect(outcome(realQuote(), repeated)).toBe("tcb_info_malformed");
  });

  it("refuses CRLs and issuer chains swapped for each other", () => {
    const c = realCollateral();
    expect(outcome(realQuote(), { ...c, rootCaCrl: c.pckCrl })).toBe(
      "root_ca_crl_signature_invalid",
    );
    expect(outcome(realQuote(), { ...c, pckCrl: c.rootCaCrl })).toBe("pck_crl_signature_invalid");
    expect(outcome(realQuote(), { ...c, tcbInfoIssuerChain: c.pckCrlIssuerChain })).toBe(
      "tcb_info_chain_signer_invalid",
    );
  });
});

describe("verifyQuoteChain against a counterfeit Intel", () => {
  const intel = fakeIntel();

  it("accepts a quote under the fake root only when that root is the pinned one", () => {
    const { pcs } = fakeCollateral(intel);
    expect(outcome(fakeQuote(intel), pcs, { rootKey: intel.rootKey })).toBe("ok:UpToDate:");
    // Against Intel's real pinned key, the same well-formed chain goes nowhere.
    expect(outcome(fakeQuote(intel), pcs)).toBe("root_ca_crl_signature_invalid");
    // With Intel's real CRLs (so the root CA CRL passes), the PCK chain's root is refused.
    const real = realCollateral();
    expect(
      outcome(fakeQuote(intel), {
        ...pcs,
        rootCaCrl: real.rootCaCrl,
        pckCrlIssuerChain: real.pckCrlIssuerChain,
      }),
    ).toBe("pck_chain_untrusted_root");
  });

  it("refuses TCB info and QE identity signed by any certificate but the TCB signing one", () => {
    const other = fakeCert({ cn: "Intel SGX PCK Processor CA", issuer: intel.root, ca: false });
    const { pcs } = fakeCollateral(intel, { signer: other });
    expect(outcome(fakeQuote(intel), pcs, { rootKey: intel.rootKey })).toBe(
      "tcb_info_chain_signer_invalid",
    );
    // The QE identity signed by the PCK CA (a CA under the same root), the TCB info genuine.
    const byCa = fakeCollateral(intel, { signer: intel.pckCa }).pcs;
    const genuine = fakeCollateral(intel).pcs;
    const mixed = {
      ...genuine,
      qeIdentityBody: byCa.qeIdentityBody,
      qeIdentityIssuerChain: byCa.qeIdentityIssuerChain,
    };
    expect(outcome(fakeQuote(intel), mixed, { rootKey: intel.rootKey })).toBe(
      "qe_identity_chain_signer_invalid",
    );
  });

  it("refuses a revoked PCK certificate", () => {
    const { pcs } = fakeCollateral(intel, { revokedPcks: [intel.pck.cert.serialNumber] });
    expect(outcome(fakeQuote(intel), pcs, { rootKey: intel.rootKey })).toBe("pck_chain_revoked");
  });

  it("refuses expired TCB info", () => {
    const { pcs } = fakeCollateral(intel, {
      tcbInfo: (info) => {
        info.nextUpdate = "2025-06-19T12:00:00Z";
      },
    });
    expect(outcome(fakeQuote(intel), pcs, { rootKey: intel.rootKey })).toBe("tcb_info_expired");
  });

  it("refuses a QE that is not the QE identity's", () => {
    const { pcs } = fakeCollateral(intel, {
      qeIdentity: (identity) => {
        identity.mrsigner = "00".repeat(32);
      },
    });
    expect(outcome(fakeQuote(intel), pcs, { rootKey: intel.rootKey })).toBe("qe_identity_mismatch");
  });

  it("reports the TCB status and advisories of the level the platform meets", () => {
    const { pcs } = fakeCollateral(intel, {
      tcbInfo: (info) => {
        const levels = info.tcbLevels as { tcbStatus: string; advisoryIDs?: string[] }[];
        levels[0]!.tcbStatus = "OutOfDate";
        levels[0]!.advisoryIDs = ["INTEL-SA-01234"];
      },
    });
    expect(outcome(fakeQuote(intel), pcs, { rootKey: intel.rootKey })).toBe(
      "ok:OutOfDate:INTEL-SA-01234",
    );
  });

  it("refuses TCB info for another platform", () => {
    const { pcs } = fakeCollateral(intel, {
      tcbInfo: (info) => {
        info.fmspc = "00906ED50000";
      },
    });
    expect(outcome(fakeQuote(intel), pcs, { rootKey: intel.rootKey })).toBe(
      "tcb_info_fmspc_mismatch",
    );
  });

  it("judges the TDX module's SVN by its identity, not the platform levels, when its version is not 0", () => {
    // Intel's QVL (TcbLevelCheck isTdxTcbHigherOrEqual): with TEE TCB SVN byte 1 (the module's
    // major version) above 0, the level walk starts at byte 2. The real levels ask for module
    // SVN 5; TDX_01's identity accepts SVN 4 as UpToDate and calls SVN 2 OutOfDate.
    const { pcs } = fakeCollateral(intel);
    const svn = (bytes: number[]) => Buffer.from([...bytes, ...Array(16 - bytes.length).fill(0)]);
    const at = (teeTcbSvn: Buffer) =>
      outcome(fakeQuote(intel, { teeTcbSvn }), pcs, { rootKey: intel.rootKey });
    expect(at(svn([4, 1, 3]))).toBe("ok:UpToDate:");
    expect(at(svn([2, 1, 3]))).toMatch(/^ok:OutOfDate:/);
    expect(at(svn([1, 1, 3]))).toBe("tdx_module_level_not_found");
    expect(at(svn([9, 7, 3]))).toBe("tdx_module_unknown");
  });

  it("refuses a TDX module that is not the TCB info's", () => {
    const { pcs } = fakeCollateral(intel);
    const otherSeam = fakeQuote(intel, { mrSignerSeam: Buffer.alloc(48, 1) });
    expect(outcome(otherSeam, pcs, { rootKey: intel.rootKey })).toBe("tdx_module_mismatch");
  });
});
