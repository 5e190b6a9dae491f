// Our chain of trust against an independent implementation, Phala's @phala/dcap-qvl (pure
// JavaScript, Apache-2.0; a devDependency, never shipped), on every vector: the real quote and
// each tampered or counterfeit variant. Where both decide, they must agree (accept or refuse,
// and the same TCB status and advisories when accepting). Where the oracle checks less (it
// verifies neither CRL signatures nor the TDX module identity), the vector is listed as
// "stricter": we must refuse and the oracle is shown to accept, so the gap stays documented.

import type { KeyObject } from "node:crypto";
import { generateKeyPairSync, sign } from "node:crypto";
import { QuoteVerifier } from "@phala/dcap-qvl";
import { describe, expect, it } from "vitest";
import { rawP256PublicKey } from "../attestation-key.js";
import { dcapVerifier } from "../dcap-verifier.js";
import { parseTdxQuote } from "../tdx-quote.js";
import { type FakeIntel, fakeCollateral, fakeIntel, fakeQuote } from "./_test-fake-intel.js";
import {
  FIXTURE_TIME,
  type QvlCollateral,
  realQuote,
  realQvlCollateral,
  toPcsCollateral,
} from "./_test-fixtures.js";
import { intelCollateralVerifier } from "./intel-collateral-verifier.js";
import { CONFIGURABLE_TCB_STATUSES } from "./tcb-policy.js";

interface Vector {
  readonly name: string;
  readonly quote: Buffer;
  readonly collateral: QvlCollateral;
  readonly now?: Date;
  readonly intel?: FakeIntel;
  /** We refuse what the oracle does not check. */
  readonly stricter?: boolean;
}

const flip = (offset: number) => {
  const bytes = realQuote();
  bytes[offset]! ^= 1;
  return bytes;
};
const QE_REPORT = 636 + 134;
const QE_AUTH = QE_REPORT + 384 + 64 + 2;

function resignedWithOtherKey(): Buffer {
  const bytes = realQuote();
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  sign("sha256", bytes.subarray(0, 632), { key: privateKey, dsaEncoding: "ieee-p1363" }).copy(
    bytes,
    636,
  );
  rawP256PublicKey(privateKey).copy(bytes, 700);
  return bytes;
}

function vectors(): Vector[] {
  const real = realQvlCollateral();
  const intel = fakeIntel();
  const fake = (
    name: string,
    options: Parameters<typeof fakeCollateral>[1] = {},
    quote = fakeQuote(intel),
  ) => ({
    name,
    quote,
    collateral: fakeCollateral(intel, options).qvl,
    intel,
  });
  const debug = Buffer.from(parseTdxQuote(realQuote()).body.tdAttributes);
  debug[0]! |= 1;
  return [
    { name: "the real quote", quote: realQuote(), collateral: real },
    { name: "header bit", quote: flip(30), collateral: real },
    { name: "body bit", quote: flip(248), collateral: real },
    { name: "QE report bit", quote: flip(QE_REPORT + 100), collateral: real },
    { name: "QE auth data bit", quote: flip(QE_AUTH + 3), collateral: real },
    { name: "attestation key bit", quote: flip(700 + 10), collateral: real },
    {
      name: "re-signed by another attestation key",
      quote: resignedWithOtherKey(),
      collateral: real,
    },
    {
      name: "after the collateral's next update",
      quote: realQuote(),
      collateral: real,
      now: new Date("2025-08-01Z"),
    },
    {
      name: "TCB info edited after signing",
      quote: realQuote(),
      collateral: { ...real, tcb_info: real.tcb_info.replace('"pceId":"0000"', '"pceId":"0001"') },
    },
    fake("a counterfeit Intel, its own root pinned"),
    { ...fake("a counterfeit Intel against Intel's root"), intel: undefined },
    fake("a revoked PCK", { revokedPcks: [intel.pck.cert.serialNumber] }),
    fake("expired TCB info", {
      tcbInfo: (i) => {
        i.nextUpdate = "2025-06-19T12:00:00Z";
      },
    }),
    fake("expired QE identity", {
      qeIdentity: (i) => {
        i.nextUpdate = "2025-06-19T12:00:00Z";
      },
    }),
    fake("another QE's MRSIGNER", {
      qeIdentity: (i) => {
        i.mrsigner = "00".repeat(32);
      },
    }),
    fake("another QE product", {
      qeIdentity: (i) => {
        i.isvprodid = 9;
      },
    }),
    fake("another platform's TCB info", {
      tcbInfo: (i) => {
        i.fmspc = "00906ED50000";
      },
    }),
    fake("an OutOfDate platform", {
      tcbInfo: (i) => {
        const levels = i.tcbLevels as { tcbStatus: string; advisoryIDs?: string[] }[];
        levels[0]!.tcbStatus = "OutOfDate";
        levels[0]!.advisoryIDs = ["INTEL-SA-00837", "INTEL-SA-00960"];
      },
    }),
    fake("a revoked platform TCB", {
      tcbInfo: (i) => {
        (i.tcbLevels as { tcbStatus: string }[])[0]!.tcbStatus = "Revoked";
      },
    }),
    fake("a DEBUG TD", {}, fakeQuote(intel, { tdAttributes: debug })),
    {
      ...fake("the root CA CRL swapped for the PCK CRL"),
      collateral: (() => {
        const c = fakeCollateral(intel).qvl;
        return { ...c, root_ca_crl: c.pck_crl };
      })(),
      stricter: true,
    },
    {
      ...fake(
        "another TDX module signer",
        {},
        fakeQuote(intel, { mrSignerSeam: Buffer.alloc(48, 1) }),
      ),
      stricter: true,
    },
  ];
}

async function ours(vector: Vector): Promise<string> {
  const quote = parseTdxQuote(vector.quote);
  const verifier = dcapVerifier({
    measurements: [quote.measurement],
    collateral: intelCollateralVerifier({
      source: { collateralFor: async () => toPcsCollateral(vector.collateral) },
      now: () => vector.now ?? FIXTURE_TIME,
      // Like the oracle, accept every status but Revoked: the policy is compared separately.
      acceptedStatuses: CONFIGURABLE_TCB_STATUSES,
      rootKey: vector.intel?.rootKey as KeyObject | undefined,
    }),
  });
  const verdict = await verifier.verify(vector.quote, {
    reportData: quote.body.reportData,
    measurements: [],
  });
  if (verdict.status !== "verified") return `refused (${verdict.code})`;
  return `${verdict.tcb!.status} [${verdict.tcb!.advisoryIds.join(",")}]`;
}

function oracle(vector: Vector): string {
  const verifier = vector.intel
    ? QuoteVerifier.newWithRootCa(vector.intel.root.cert.raw)
    : QuoteVerifier.newProd();
  try {
    const now = Math.floor((vector.now ?? FIXTURE_TIME).getTime() / 1000);
    const report = verifier.verify(vector.quote, vector.collateral, now);
    return `${report.status} [${report.advisory_ids.join(",")}]`;
  } catch {
    return "refused";
  }
}

describe("cross-check with @phala/dcap-qvl", () => {
  for (const vector of vectors()) {
    it(`${vector.stricter ? "is stricter on" : "agrees on"}: ${vector.name}`, async () => {
      const mine = await ours(vector);
      const theirs = oracle(vector);
      if (vector.stricter) {
        expect(mine).toMatch(/^refused/);
        expect(theirs).not.toBe("refused");
      } else {
        expect(mine.replace(/ \(.*\)$/, "")).toBe(theirs);
      }
    });
  }

  it("covers accepted and refused vectors alike", async () => {
    const outcomes = await Promise.all(vectors().map(ours));
    expect(outcomes.filter((o) => !o.startsWith("refused")).length).toBeGreaterThanOrEqual(3);
    expect(outcomes.filter((o) => o.startsWith("refused")).length).toBeGreaterThanOrEqual(10);
  });
});
