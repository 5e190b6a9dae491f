import { describe, expect, it } from "vitest";
import { normalizeWeights } from "./normalize-weights.js";

const sum = (weights: Record<string, number>) => Object.values(weights).reduce((a, b) => a + b, 0);

describe("normalizeWeights", () => {
  it("scales positive weights to sum to 1, keeping their ratios", () => {
    expect(normalizeWeights({ a: 3, b: 1 })).toEqual({ a: 0.75, b: 0.25 });
    expect(normalizeWeights({ a: 0.5 })).toEqual({ a: 1 });
  });

  it("drops zero, negative, NaN, infinite and non-number weights", () => {
    const weights = {
      a: 0,
      b: -1,
      c: Number.NaN,
      d: Number.POSITIVE_INFINITY,
      e: Number.NEGATIVE_INFINITY,
      f: 2,
    };
    expect(
      normalizeWeights({ ...weights, g: "3" as unknown as number, h: null as unknown as number }),
    ).toEqual({ f: 1 });
  });

  it("is {} when nothing is left", () => {
    expect(normalizeWeights({})).toEqual({});
    expect(normalizeWeights({ a: 0, b: -2 })).toEqual({});
  });

  it("does not overflow on huge finite weights", () => {
    const out = normalizeWeights({ a: Number.MAX_VALUE, b: Number.MAX_VALUE });
    expect(out).toEqual({ a: 0.5, b: 0.5 });
  });

  it("keeps tiny weights and sums to 1 within rounding", () => {
    const out = normalizeWeights({ a: 1e-300, b: 3e-300, c: 1e-10 });
    expect(sum(out)).toBeCloseTo(1, 12);
    expect(out["b"]! / out["a"]!).toBeCloseTo(3, 9);
  });

  it("treats a hotkey named __proto__ as a plain key and never touches the prototype", () => {
    const input = JSON.parse('{"__proto__": 1, "b": 1}') as Record<string, number>;
    const out = normalizeWeights(input);
    expect(Object.keys(out).sort()).toEqual(["__proto__", "b"]);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(JSON.stringify(out)).toBe('{"__proto__":0.5,"b":0.5}');
  });

  it("does not modify its input", () => {
    const input = { a: 2, b: -1 };
    normalizeWeights(input);
    expect(input).toEqual({ a: 2, b: -1 });
  });
});
