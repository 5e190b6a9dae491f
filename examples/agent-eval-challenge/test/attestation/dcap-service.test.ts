// The service with ATTESTATION_VERIFIER=dcap and a local PCCS (a real HTTP server speaking
// Intel's PCS v4 API, serving the real collateral): the verifier the challenge builds from its
// settings checks a real TDX quote's chain of trust and records the TCB status; a real quote
// posted as a review report is still refused for its binding (it was made for someone else's
// report_data: the binding checks stay covered by the development quotes).

import { testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  FIXTURE_TIME,
  realCollateral,
  realQuote,
} from "../../src/attestation/dcap/_test-fixtures.js";
import { startTestPccs, type TestPccs } from "../../src/attestation/dcap/_test-pccs-server.js";
import { parseTdxQuote } from "../../src/attestation/tdx-quote.js";
import { type AgentEvalTest, startAgentEval, withVerifier } from "../agent-eval-kit.js";
import { envelopeFor, postReport, readyForReport } from "../review/report-kit.js";

const real = parseTdxQuote(realQuote());

describe.each(await testBackends())("the dcap verifier in service on %s", (backend) => {
  let t: AgentEvalTest;
  let pccs: TestPccs;
  beforeAll(async () => {
    pccs = await startTestPccs(realCollateral(), "B0C06F000000");
    t = await startAgentEval(backend, {
      ATTESTATION_VERIFIER: "dcap",
      DCAP_COLLATERAL_URL: pccs.url,
      DCAP_COLLATERAL_TIMEOUT_MS: "2000",
      MEASUREMENT_ALLOWLIST: real.measurement,
    });
  });
  afterAll(async () => {
    await t?.close();
    await pccs?.close();
  });
  afterEach(() => {
    vi.useRealTimers();
    pccs.mode = "up";
  });

  it("verifies a real quote's chain of trust at a time inside its collateral's validity", async () => {
    expect(t.state.verifier.kind).toBe("dcap");
    // The real collateral expired in 2025: pin the clock (Date only) inside its windows.
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(FIXTURE_TIME);
    const verdict = await t.state.verifier.verify(realQuote(), {
      reportData: real.body.reportData,
      measurements: [],
    });
    expect(verdict).toMatchObject({
      status: "verified",
      measurement: real.measurement,
      tcb: { status: "UpToDate", advisoryIds: [] },
    });
    const rows = await t.sql`select fmspc, ca from dcap_collateral`;
    expect(rows).toEqual([{ fmspc: "b0c06f000000", ca: "platform" }]);
  });

  it("answers unavailable (503, nonce kept) when neither the PCCS nor the cache can help", async () => {
    await t.sql`delete from dcap_collateral`;
    pccs.mode = "error";
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(FIXTURE_TIME);
    expect(
      await t.state.verifier.verify(realQuote(), {
        reportData: real.body.reportData,
        measurements: [],
      }),
    ).toMatchObject({ status: "unavailable", code: "collateral_unavailable" });
  });

  it("refuses a real quote posted as a review report: it cannot bind this assignment", async () => {
    const ready = await readyForReport(t);
    const envelope = await envelopeFor(ready, { claimedMeasurement: real.measurement });
    envelope.attestation.quote = realQuote().toString("base64");
    const response = await postReport(t, ready, envelope);
    const body = (await response.json()) as { verification: Record<string, unknown> };
    expect(response.status, JSON.stringify(body)).toBe(202);
    expect(body.verification).toMatchObject({
      status: "rejected",
      code: "report_data_mismatch",
      verifier: "dcap",
      confidential: true,
      tcb_status: null,
      advisory_ids: null,
    });
  });

  it("records Intel's TCB status and advisories with the verdict and in the public report", async () => {
    const ready = await readyForReport(t);
    const envelope = await envelopeFor(ready);
    // What the dcap path answers for a quote whose chain holds (the development quote stands in
    // for one that binds this assignment).
    const response = await withVerifier(
      t,
      () => postReport(t, ready, envelope),
      async (quote) => {
        const parsed = parseTdxQuote(quote);
        return {
          status: "verified",
          measurement: parsed.measurement,
          quote: parsed,
          tcb: { status: "SWHardeningNeeded", advisoryIds: ["INTEL-SA-00615", "INTEL-SA-00837"] },
        };
      },
    );
    const body = (await response.json()) as { verification: Record<string, unknown> };
    expect(response.status, JSON.stringify(body)).toBe(202);
    expect(body.verification).toMatchObject({
      status: "verified",
      tcb_status: "SWHardeningNeeded",
      advisory_ids: ["INTEL-SA-00615", "INTEL-SA-00837"],
    });
    const report = await t.signedFetch(`/submissions/${ready.submissionId}/review/report`, {
      miner: ready.miner,
    });
    const page = (await report.json()) as { items: Record<string, unknown>[] };
    expect(report.status).toBe(200);
    expect(page.items[0]).toMatchObject({
      verifier: "dcap",
      tcb_status: "SWHardeningNeeded",
      advisory_ids: ["INTEL-SA-00615", "INTEL-SA-00837"],
    });
  });
});
