import { describe, expect, it } from "vitest";
import { chooseEra } from "./_commit-era.js";

// The era must keep a commit out of the block that starts storing commits under the next epoch,
// while leaving it every block before that bound.
describe("chooseEra", () => {
  it("is born at the finalized block when the bound is an era or more away", () => {
    expect(chooseEra({ finalized: 1000, eraPeriod: 64 })).toEqual({ birth: 1000, period: 64 });
    expect(chooseEra({ finalized: 1000, eraPeriod: 64, deathBound: 1064 })).toEqual({
      birth: 1000,
      period: 64,
    });
    expect(chooseEra({ finalized: 1000, eraPeriod: 16, deathBound: 1360 })).toEqual({
      birth: 1000,
      period: 16,
    });
  });

  it("dies exactly at a nearer bound, born in the past, for every distance and era length", () => {
    for (const eraPeriod of [4, 8, 16, 64, 256]) {
      for (let distance = 1; distance < eraPeriod; distance++) {
        const finalized = 5000;
        const era = chooseEra({ finalized, eraPeriod, deathBound: finalized + distance });
        const why = `eraPeriod ${eraPeriod}, bound ${distance} blocks ahead`;
        // A power of two from 4, no longer than asked.
        expect(Math.log2(era.period) % 1, why).toBe(0);
        expect(era.period, why).toBeGreaterThanOrEqual(4);
        expect(era.period, why).toBeLessThanOrEqual(eraPeriod);
        // Dead at the bound, born at a block the signer knows.
        expect(era.birth + era.period, why).toBe(finalized + distance);
        expect(era.birth, why).toBeLessThanOrEqual(finalized);
      }
    }
  });

  it("never reaches past the bound near genesis", () => {
    const era = chooseEra({ finalized: 1, eraPeriod: 64, deathBound: 3 });
    expect(era).toEqual({ birth: 0, period: 4 });
  });
});
