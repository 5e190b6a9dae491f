import { describe, expect, it } from "vitest";
import { devKey, freshPrivateKeyPem, sampleReportData, signQuoteWith } from "./_test-quotes.js";
import type { CollateralVerifier } from "./collateral-verifier.js";
import { dcapVerifier } from "./dcap-verifier.js";
import { DEV_MEASUREMENT, signDevQuote } from "./dev-quote.js";
import type { ParsedTdxQuote } from "./tdx-quote.js";
import { decidedVerification } from "./verify-attestation.js";

const reportData = sampleReportData();
const expected = { reportData, measurements: [] as string[] };
// Any P-256 key stands in for a Quoting Enclave's attestation key here: the collateral stub
// plays the part of the chain of trust that would vouch for it.
const qePem = freshPrivateKeyPem();
const quote = () => signDevQuote({ privateKeyPem: qePem, reportData });

function recordingCollateral(answer: Awaited<ReturnType<CollateralVerifier["verifyChain"]>>) {
  const seen: ParsedTdxQuote[] = [];
  const collateral: CollateralVerifier = {
    verifyChain: async (parsed) => {
      seen.push(parsed);
      return answer;
    },
  };
  return { collateral, seen };
}

describe("dcapVerifier", () => {
  it("is the confidential kind", () => {
    const verifier = dcapVerifier({ measurements: [DEV_MEASUREMENT] });
    expect(verifier.kind).toBe("dcap");
    expect(verifier.confidential).toBe(true);
  });

  it("by default answers unavailable for a quote that passes every local check", async () => {
    const verdict = await dcapVerifier({ measurements: [DEV_MEASUREMENT] }).verify(
      quote(),
      expected,
    );
    expect(verdict).toMatchObject({ status: "unavailable", code: "collateral_unavailable" });
  });

  it("never verifies a development quote signed by the published key without collateral", async () => {
    const devQuote = signDevQuote({ privateKeyPem: devKey.privateKeyPem, reportData });
    const verdict = await dcapVerifier({ measurements: [DEV_MEASUREMENT] }).verify(
      devQuote,
      expected,
    );
    expect(verdict.status).toBe("unavailable");
  });

  it("still rejects definitively what is locally wrong while collateral is unreachable", async () => {
    const verifier = dcapVerifier({ measurements: [DEV_MEASUREMENT] });
    const tampered = quote();
    tampered[200]! ^= 1; // inside MRTD
    expect(await verifier.verify(tampered, expected)).toMatchObject({
      status: "rejected",
      code: "quote_signature_invalid",
    });
    const otherBinding = { reportData: sampleReportData(3), measurements: [] };
    expect(await verifier.verify(quote(), otherBinding)).toMatchObject({
      code: "report_data_mismatch",
    });
  });

  it("verifies when the collateral verifier vouches for the chain, and hands it the quote", async () => {
    const { collateral, seen } = recordingCollateral({ status: "ok" });
    const verdict = await dcapVerifier({ collateral, measurements: [DEV_MEASUREMENT] }).verify(
      quote(),
      expected,
    );
    expect(verdict.status).toBe("verified");
    if (verdict.status === "verified") expect(verdict.measurement).toBe(DEV_MEASUREMENT);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.measurement).toBe(DEV_MEASUREMENT);
    expect(seen[0]!.signatureData.certificationDataType).toBe(5);
  });

  it("passes on a collateral rejection as a definitive rejection", async () => {
    const { collateral } = recordingCollateral({
      status: "rejected",
      code: "tcb_revoked",
      message: "the platform TCB is revoked",
    });
    const verdict = await dcapVerifier({ collateral, measurements: [DEV_MEASUREMENT] }).verify(
      quote(),
      expected,
    );
    expect(verdict).toEqual({
      status: "rejected",
      code: "tcb_revoked",
      message: "the platform TCB is revoked",
    });
  });

  it("turns a throwing or misbehaving collateral verifier into unavailable, never verified", async () => {
    const throwing: CollateralVerifier = {
      verifyChain: async () => {
        throw new Error("PCS timeout");
      },
    };
    const verdict = await dcapVerifier({
      collateral: throwing,
      measurements: [DEV_MEASUREMENT],
    }).verify(quote(), expected);
    expect(verdict).toMatchObject({ status: "unavailable", code: "collateral_failed" });

    const garbage = {
      verifyChain: async () => ({ status: "yes" }),
    } as unknown as CollateralVerifier; // deliberately breaks the contract
    const garbageVerdict = await dcapVerifier({
      collateral: garbage,
      measurements: [DEV_MEASUREMENT],
    }).verify(quote(), expected);
    expect(garbageVerdict).toMatchObject({ status: "unavailable", code: "collateral_failed" });
  });

  it("does not consult collateral for a measurement outside the allow-list", async () => {
    const { collateral, seen } = recordingCollateral({ status: "ok" });
    const verifier = dcapVerifier({ collateral, measurements: ["ab".repeat(48)] });
    expect(await verifier.verify(quote(), expected)).toMatchObject({
      code: "measurement_not_allowed",
    });
    // With no measurements configured at all, nothing is accepted (fail closed).
    const empty = dcapVerifier({ collateral, measurements: [] });
    expect(await empty.verify(quote(), expected)).toMatchObject({
      code: "measurement_not_allowed",
    });
    expect(seen).toHaveLength(0);
    // A per-call allow-list overrides the configured default.
    expect(
      (await verifier.verify(quote(), { reportData, measurements: [DEV_MEASUREMENT] })).status,
    ).toBe("verified");
  });

  it("rejects a debug TD even when collateral vouches for it", async () => {
    const { collateral } = recordingCollateral({ status: "ok" });
    const tdAttributes = Buffer.alloc(8);
    tdAttributes[0] = 0x01; // TUD.DEBUG
    const debugQuote = signQuoteWith(qePem, { reportData, tdAttributes });
    const verdict = await dcapVerifier({ collateral, measurements: [DEV_MEASUREMENT] }).verify(
      debugQuote,
      expected,
    );
    expect(verdict).toMatchObject({ status: "rejected", code: "td_debug_enabled" });

    // The usual production attribute (SEPT_VE_DISABLE, bit 28) is not the debug bit.
    const productionAttributes = Buffer.alloc(8);
    productionAttributes.writeUInt32LE(0x10000000, 0);
    const productionQuote = signQuoteWith(qePem, {
      reportData,
      tdAttributes: productionAttributes,
    });
    expect(
      (
        await dcapVerifier({ collateral, measurements: [DEV_MEASUREMENT] }).verify(
          productionQuote,
          expected,
        )
      ).status,
    ).toBe("verified");
  });
});

describe("the TCB assessment a collateral verifier reports", () => {
  it("is carried by the verdict and recorded by decidedVerification, and only when well formed", async () => {
    const tcb = { status: "SWHardeningNeeded", advisoryIds: ["INTEL-SA-00615"] };
    const { collateral } = recordingCollateral({ status: "ok", tcb });
    const verifier = dcapVerifier({ collateral, measurements: [DEV_MEASUREMENT] });
    const verdict = await verifier.verify(quote(), expected);
    expect(verdict).toMatchObject({ status: "verified", tcb });
    if (verdict.status !== "verified") throw new Error("unreachable");
    expect(decidedVerification(verifier, verdict)).toMatchObject({
      status: "verified",
      verifier: "dcap",
      tcb_status: "SWHardeningNeeded",
      advisory_ids: ["INTEL-SA-00615"],
    });
    // A malformed assessment is dropped, never recorded.
    const garbage = recordingCollateral({
      status: "ok",
      tcb: { status: 7, advisoryIds: "x" },
    } as unknown as Awaited<ReturnType<CollateralVerifier["verifyChain"]>>);
    const dropped = await dcapVerifier({
      collateral: garbage.collateral,
      measurements: [DEV_MEASUREMENT],
    }).verify(quote(), expected);
    expect(dropped.status).toBe("verified");
    expect("tcb" in dropped).toBe(false);
    // Refusals before any assessment record none; a refusal of the status records it.
    expect(
      decidedVerification(verifier, { status: "rejected", code: "x", message: "y" }),
    ).toMatchObject({ tcb_status: null, advisory_ids: null });
    const refused = recordingCollateral({
      status: "rejected",
      code: "tcb_status_not_accepted",
      message: "OutOfDate",
      tcb: { status: "OutOfDate", advisoryIds: ["INTEL-SA-00837"] },
    } as Awaited<ReturnType<CollateralVerifier["verifyChain"]>>);
    const refusedVerdict = await dcapVerifier({
      collateral: refused.collateral,
      measurements: [DEV_MEASUREMENT],
    }).verify(quote(), expected);
    if (refusedVerdict.status !== "rejected") throw new Error("expected a rejection");
    expect(decidedVerification(verifier, refusedVerdict)).toMatchObject({
      status: "rejected",
      code: "tcb_status_not_accepted",
      tcb_status: "OutOfDate",
      advisory_ids: ["INTEL-SA-00837"],
    });
  });
});
