import { describe, expect, it } from "vitest";
import { DRAND_QUICKNET, verifyRoundSignature } from "../drand-beacon.js";
import { LocalBeacon } from "./_local-beacon.js";

const seed = (text: string) => new TextEncoder().encode(text);

describe("the local drand beacon", () => {
  it("signs rounds that verify against its key, deterministically per seed", () => {
    const a = new LocalBeacon({ seed: seed("a") });
    expect(verifyRoundSignature(a.publicKey, 42n, a.signature(42n))).toBe(true);
    expect(verifyRoundSignature(a.publicKey, 43n, a.signature(42n))).toBe(false);
    expect(new LocalBeacon({ seed: seed("a") }).publicKey).toEqual(a.publicKey);
    expect(new LocalBeacon({ seed: seed("b") }).publicKey).not.toEqual(a.publicKey);
    expect(new LocalBeacon().publicKey).not.toEqual(new LocalBeacon().publicKey);
  });

  it("publishes round r at genesis + (r - 1) · period, on quicknet's schedule by default", () => {
    const b = new LocalBeacon({ seed: seed("a") });
    expect(b.info()).toEqual({
      public_key: Buffer.from(b.publicKey).toString("hex"),
      genesis_time: DRAND_QUICKNET.genesisTime,
      period: 3,
    });
    const g = DRAND_QUICKNET.genesisTime * 1000;
    expect(b.roundAt(g - 1)).toBe(0n);
    expect(b.roundAt(g)).toBe(1n);
    expect(b.roundAt(g + 2999)).toBe(1n);
    expect(b.roundAt(g + 3000)).toBe(2n);
    for (const r of [1n, 2n, 1_000_000n]) {
      expect(b.roundAt(b.roundTime(r))).toBe(r);
      expect(b.roundAt(b.roundTime(r) - 1)).toBe(r - 1n);
    }
    const custom = new LocalBeacon({ genesisTime: 100, period: 5 });
    expect(custom.roundAt(110_000)).toBe(3n);
  });

  it("remembers skipped rounds", () => {
    const b = new LocalBeacon();
    b.skip(7n);
    expect(b.isSkipped(7n)).toBe(true);
    expect(b.isSkipped(8n)).toBe(false);
    expect(() => b.skip(-1n)).toThrow(RangeError);
  });
});
