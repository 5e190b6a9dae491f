// Collateral from a PCCS, end to end: a real HTTP server speaking Intel's PCS v4 API serves the
// real collateral, the cache lives in the challenge's real database, and the dcap verifier
// checks the real quote's chain through them, including what an outage does.

import type { Sql } from "@platform/challenge-sdk";
import { testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  FIXTURE_TIME,
  realCollateral,
  realQuote,
} from "../../src/attestation/dcap/_test-fixtures.js";
import { startTestPccs, type TestPccs } from "../../src/attestation/dcap/_test-pccs-server.js";
import { cachedPccsSource } from "../../src/attestation/dcap/collateral-cache.js";
import { intelCollateralVerifier } from "../../src/attestation/dcap/intel-collateral-verifier.js";
import { fetchCollateral } from "../../src/attestation/dcap/pccs-client.js";
import { dcapVerifier } from "../../src/attestation/dcap-verifier.js";
import { parseTdxQuote } from "../../src/attestation/tdx-quote.js";
import { agentEvalDatabase } from "../agent-eval-database.js";

const real = parseTdxQuote(realQuote());
const expected = { reportData: real.body.reportData, measurements: [] };
const FMSPC = "b0c06f000000";

describe.each(await testBackends())("dcap collateral from a PCCS, cached on %s", (backend) => {
  let db: Awaited<ReturnType<typeof agentEvalDatabase>>;
  let sql: Sql;
  let pccs: TestPccs;
  let clock: Date;
  const fetchErrors: string[] = [];

  beforeAll(async () => {
    db = await agentEvalDatabase(backend);
    sql = db.sql;
    pccs = await startTestPccs(realCollateral(), FMSPC);
  });
  afterAll(async () => {
    await pccs?.close();
    await db?.close();
  });
  beforeEach(async () => {
    await sql`delete from dcap_collateral`;
    pccs.mode = "up";
    pccs.pccsPaths = true;
    pccs.requests.length = 0;
    fetchErrors.length = 0;
    clock = FIXTURE_TIME;
  });

  const verifier = (options: { maxRows?: number; timeoutMs?: number } = {}) =>
    dcapVerifier({
      measurements: [real.measurement],
      collateral: intelCollateralVerifier({
        now: () => clock,
        source: cachedPccsSource({
          sql,
          fetch: (request) =>
            fetchCollateral(
              {
                baseUrl: pccs.url,
                timeoutMs: options.timeoutMs ?? 2000,
                rootCaCrlUrl: `${pccs.url}/IntelSGXRootCA.der`,
              },
              request,
            ),
          refreshSeconds: 3600,
          maxRows: options.maxRows ?? 16,
          now: () => clock,
          onFetchError: (_request, error) => fetchErrors.push(String(error)),
        }),
      }),
    });

  it("verifies the real quote's chain with collateral fetched from the PCCS, and caches it", async () => {
    const verdict = await verifier().verify(realQuote(), expected);
    expect(verdict).toMatchObject({ status: "verified", tcb: { status: "UpToDate" } });
    expect(pccs.requests.sort()).toEqual([
      "/sgx/certification/v4/pckcrl?ca=platform&encoding=der",
      "/sgx/certification/v4/rootcacrl",
      "/tdx/certification/v4/qe/identity",
      "/tdx/certification/v4/tcb?fmspc=B0C06F000000",
    ]);
    const [row] = await sql<{ valid_until: Date; tcb_info_body: string }[]>`
      select valid_until, tcb_info_body from dcap_collateral where fmspc = ${FMSPC} and ca = 'platform'`;
    // The earliest nextUpdate of the four documents, and the body kept byte for byte.
    expect(row!.valid_until.getTime()).toBeLessThanOrEqual(Date.parse("2025-07-19T10:16:03Z"));
    expect(row!.tcb_info_body).toBe(realCollateral().tcbInfoBody);

    // Within the refresh interval the cache answers alone.
    pccs.requests.length = 0;
    expect((await verifier().verify(realQuote(), expected)).status).toBe("verified");
    expect(pccs.requests).toEqual([]);
  });

  it("asks the PCCS once for a burst of quotes from one platform", async () => {
    const dcap = verifier();
    const verdicts = await Promise.all(
      Array.from({ length: 6 }, () => dcap.verify(realQuote(), expected)),
    );
    expect(verdicts.map((v) => v.status)).toEqual(Array(6).fill("verified"));
    expect(pccs.requests).toHaveLength(4);
  });

  it("speaks to Intel's PCS too: the root CA CRL from Intel's distribution point", async () => {
    pccs.pccsPaths = false;
    expect((await verifier().verify(realQuote(), expected)).status).toBe("verified");
    expect(pccs.requests).toContain("/sgx/certification/v4/rootcacrl");
    expect(pccs.requests).toContain("/IntelSGXRootCA.der");
  });

  it("keeps verifying through a PCCS outage while the cached collateral is valid", async () => {
    expect((await verifier().verify(realQuote(), expected)).status).toBe("verified");
    pccs.mode = "error";
    clock = new Date(FIXTURE_TIME.getTime() + 2 * 3600 * 1000); // past the refresh interval
    expect((await verifier().verify(realQuote(), expected)).status).toBe("verified");
    expect(pccs.requests.length).toBeGreaterThan(4); // it did try to refresh
    expect(fetchErrors.join()).toMatch(/answered 500/);
  });

  it("answers unavailable during an outage without a valid cache (nonce kept: nothing decided)", async () => {
    pccs.mode = "error";
    expect(await verifier().verify(realQuote(), expected)).toMatchObject({
      status: "unavailable",
      code: "collateral_unavailable",
    });
    // A cached row past its validity is no better than none.
    pccs.mode = "up";
    expect((await verifier().verify(realQuote(), expected)).status).toBe("verified");
    pccs.mode = "error";
    clock = new Date("2025-07-20T00:00:00Z");
    expect(await verifier().verify(realQuote(), expected)).toMatchObject({
      status: "unavailable",
    });
  });

  it("gives up on a hanging PCCS at the timeout", async () => {
    pccs.mode = "hang";
    const started = Date.now();
    expect(await verifier({ timeoutMs: 300 }).verify(realQuote(), expected)).toMatchObject({
      status: "unavailable",
      code: "collateral_unavailable",
    });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(fetchErrors.join()).toMatch(/timed out/);
  });

  it("bounds the cache, evicting the least recently fetched platform", async () => {
    const source = cachedPccsSource({
      sql,
      fetch: async () => realCollateral(),
      refreshSeconds: 3600,
      maxRows: 2,
      now: () => clock,
    });
    for (const [i, fmspc] of ["000000000001", "000000000002", "000000000003"].entries()) {
      clock = new Date(FIXTURE_TIME.getTime() + i * 1000);
      expect(await source.collateralFor({ fmspc, ca: "platform" })).not.toBeNull();
    }
    const rows = await sql<{ fmspc: string }[]>`select fmspc from dcap_collateral order by fmspc`;
    expect(rows.map((r) => r.fmspc)).toEqual(["000000000002", "000000000003"]);
  });

  it("does not keep an answer that does not parse", async () => {
    pccs.collateral = { ...realCollateral(), pckCrl: Buffer.from("not a crl") };
    try {
      expect(await verifier().verify(realQuote(), expected)).toMatchObject({
        status: "unavailable",
      });
      expect(await sql`select 1 from dcap_collateral`).toHaveLength(0);
    } finally {
      pccs.collateral = realCollateral();
    }
  });
});
