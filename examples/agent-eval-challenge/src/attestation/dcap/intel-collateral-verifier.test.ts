import { describe, expect, it } from "vitest";
import { dcapVerifier } from "../dcap-verifier.js";
import { parseTdxQuote } from "../tdx-quote.js";
import { fakeCollateral, fakeIntel, fakeQuote } from "./_test-fake-intel.js";
import { FIXTURE_TIME, realCollateral, realQuote } from "./_test-fixtures.js";
import type { DcapCollateral } from "./collateral.js";
import {
  type CollateralRequest,
  type IntelCollateralVerifierOptions,
  intelCollateralVerifier,
} from "./intel-collateral-verifier.js";
import type { TcbStatus } from "./tcb-status.js";

/** What the real quote binds and measures: a real quote cannot bind our own assignment. */
const real = parseTdxQuote(realQuote());
const expected = { reportData: real.body.reportData, measurements: [real.measurement] };

function staticSource(collateral: DcapCollateral | null) {
  const asked: CollateralRequest[] = [];
  return {
    asked,
    source: {
      collateralFor: async (request: CollateralRequest) => {
        asked.push(request);
        return collateral;
      },
    },
  };
}

function verifier(
  collateral: DcapCollateral | null,
  options: Partial<IntelCollateralVerifierOptions> & { accepted?: TcbStatus[] } = {},
) {
  const { source } = staticSource(collateral);
  return dcapVerifier({
    measurements: [real.measurement],
    collateral: intelCollateralVerifier({
      source,
      now: () => FIXTURE_TIME,
      acceptedStatuses: options.accepted,
      rootKey: options.rootKey,
    }),
  });
}

describe("the dcap verifier with Intel's chain of trust", () => {
  it("verifies the real quote and records its TCB status", async () => {
    const { asked, source } = staticSource(realCollateral());
    const dcap = dcapVerifier({
      measurements: [real.measurement],
      collateral: intelCollateralVerifier({ source, now: () => FIXTURE_TIME }),
    });
    const verdict = await dcap.verify(realQuote(), expected);
    expect(verdict).toMatchObject({
      status: "verified",
      measurement: real.measurement,
      tcb: { status: "UpToDate", advisoryIds: [] },
    });
    // The platform is read from the PCK certificate: FMSPC and which PCK CA.
    expect(asked).toEqual([{ fmspc: "b0c06f000000", ca: "platform" }]);
  });

  it("refuses a flipped bit in the header and in the body (the attestation key's signature)", async () => {
    for (const offset of [30, 48 + 200]) {
      const bytes = realQuote();
      bytes[offset]! ^= 1;
      expect(await verifier(realCollateral()).verify(bytes, expected)).toMatchObject({
        status: "rejected",
        code: "quote_signature_invalid",
      });
    }
  });

  it("refuses an unaccepted TCB status, naming it", async () => {
    const verdict = await verifier(realCollateral(), { accepted: ["SWHardeningNeeded"] }).verify(
      realQuote(),
      expected,
    );
    // The refused status is recorded with the refusal.
    expect(verdict).toMatchObject({
      status: "rejected",
      code: "tcb_status_not_accepted",
      tcb: { status: "UpToDate", advisoryIds: [] },
    });
    if (verdict.status === "rejected") expect(verdict.message).toContain("UpToDate");

    const intel = fakeIntel();
    const { pcs } = fakeCollateral(intel, {
      tcbInfo: (info) => {
        const levels = info.tcbLevels as { tcbStatus: string; advisoryIDs?: string[] }[];
        levels[0]!.tcbStatus = "OutOfDate";
        levels[0]!.advisoryIDs = ["INTEL-SA-00837"];
      },
    });
    const outdated = await verifier(pcs, { rootKey: intel.rootKey }).verify(
      fakeQuote(intel),
      expected,
    );
    expect(outdated).toMatchObject({ status: "rejected", code: "tcb_status_not_accepted" });
    if (outdated.status === "rejected")
      expect(outdated.message).toMatch(/OutOfDate.*INTEL-SA-00837/);
  });

  it("refuses a Revoked platform even when a caller lists Revoked as accepted", async () => {
    const intel = fakeIntel();
    const { pcs } = fakeCollateral(intel, {
      tcbInfo: (info) => {
        (info.tcbLevels as { tcbStatus: string }[])[0]!.tcbStatus = "Revoked";
      },
    });
    const verdict = await verifier(pcs, {
      rootKey: intel.rootKey,
      accepted: ["UpToDate", "Revoked"],
    }).verify(fakeQuote(intel), expected);
    expect(verdict).toMatchObject({ status: "rejected", code: "tcb_status_not_accepted" });
    if (verdict.status === "rejected") expect(verdict.message).toContain("Revoked");
  });

  it("refuses a DEBUG TD whose chain is otherwise sound", async () => {
    const intel = fakeIntel();
    const { pcs } = fakeCollateral(intel);
    const fake = verifier(pcs, { rootKey: intel.rootKey });
    expect((await fake.verify(fakeQuote(intel), expected)).status).toBe("verified");
    const tdAttributes = Buffer.from(real.body.tdAttributes);
    tdAttributes[0]! |= 0x01;
    expect(await fake.verify(fakeQuote(intel, { tdAttributes }), expected)).toMatchObject({
      status: "rejected",
      code: "td_debug_enabled",
    });
  });

  it("answers unavailable without collateral, or with collateral that is not good now", async () => {
    expect(await verifier(null).verify(realQuote(), expected)).toMatchObject({
      status: "unavailable",
      code: "collateral_unavailable",
    });
    const later = dcapVerifier({
      measurements: [real.measurement],
      collateral: intelCollateralVerifier({
        source: staticSource(realCollateral()).source,
        now: () => new Date("2025-08-01Z"),
      }),
    });
    // Stale collateral says nothing about the quote: the nonce is kept for a later try.
    expect(await later.verify(realQuote(), expected)).toMatchObject({
      status: "unavailable",
      code: "pck_crl_expired",
    });
  });

  it("rejects (not parks) what is the quote's fault: a revoked PCK", async () => {
    const intel = fakeIntel();
    const { pcs } = fakeCollateral(intel, { revokedPcks: [intel.pck.cert.serialNumber] });
    expect(
      await verifier(pcs, { rootKey: intel.rootKey }).verify(fakeQuote(intel), expected),
    ).toMatchObject({
      status: "rejected",
      code: "pck_chain_revoked",
    });
  });
});
