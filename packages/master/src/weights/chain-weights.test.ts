import { describe, expect, it } from "vitest";
import { toU16Weights, U16_MAX } from "./chain-weights.js";

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

describe("toU16Weights", () => {
  it("maps 1.0 to 65535", () => {
    expect(toU16Weights([1])).toEqual([65_535]);
  });

  it("gives the leftover unit of an even split to the first entry", () => {
    expect(toU16Weights([0.5, 0.5])).toEqual([32_768, 32_767]);
  });

  it("sums to exactly 65535 where plain rounding would not", () => {
    // Rounding thirds gives 3 x 21845 = 65535, but sevenths round to 65534 or 65536.
    const sevenths = Array.from({ length: 7 }, () => 1 / 7);
    expect(sum(sevenths.map((w) => Math.round(w * U16_MAX)))).not.toBe(U16_MAX);
    expect(sum(toU16Weights(sevenths))).toBe(U16_MAX);
    expect(toU16Weights([1 / 3, 1 / 3, 1 / 3])).toEqual([21_845, 21_845, 21_845]);
  });

  it("gives leftover units to the largest remainders", () => {
    // exact: 6553.5 + 19660.5 + 39321 -> floors 6553 + 19660 + 39321 = 65534, one unit left;
    // both remainders are .5, so the lower index wins.
    expect(toU16Weights([0.1, 0.3, 0.6])).toEqual([6554, 19_660, 39_321]);
    // 0.7 of a unit beats 0.2.
    const result = toU16Weights([0.10001, 0.89999]);
    expect(sum(result)).toBe(U16_MAX);
  });

  it("normalises inputs that do not sum to 1", () => {
    expect(toU16Weights([2, 2])).toEqual(toU16Weights([0.5, 0.5]));
  });

  it("keeps zeros at zero and never gives them a leftover unit", () => {
    const result = toU16Weights([0, 1 / 3, 0, 2 / 3, 0]);
    expect(result[0]).toBe(0);
    expect(result[2]).toBe(0);
    expect(result[4]).toBe(0);
    expect(sum(result)).toBe(U16_MAX);
  });

  it("returns zeros for an all-zero vector and nothing for an empty one", () => {
    expect(toU16Weights([0, 0])).toEqual([0, 0]);
    expect(toU16Weights([])).toEqual([]);
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY, -0.1])("refuses %s", (bad) => {
    expect(() => toU16Weights([0.5, bad])).toThrow(RangeError);
  });

  it("stays within one unit of the exact value and sums to 65535 for random vectors", () => {
    let seed = 7;
    const next = () => {
      seed = (seed * 16_807) % 2_147_483_647;
      return seed / 2_147_483_647;
    };
    for (let run = 0; run < 120; run++) {
      const length = 1 + Math.floor(next() * 300);
      const weights = Array.from({ length }, () => (next() < 0.1 ? 0 : next() ** 4));
      if (sum(weights) === 0) continue;
      const result = toU16Weights(weights);
      expect(sum(result)).toBe(U16_MAX);
      const total = sum(weights);
      result.forEach((u, i) => {
        expect(Number.isInteger(u) && u >= 0 && u <= U16_MAX).toBe(true);
        expect(Math.abs(u - (weights[i]! / total) * U16_MAX)).toBeLessThan(1);
      });
    }
  });

  it("handles 65536 uids, more than there are units", () => {
    const result = toU16Weights(Array.from({ length: 65_536 }, () => 1));
    expect(sum(result)).toBe(U16_MAX);
    expect(Math.max(...result)).toBe(1);
  });
});
