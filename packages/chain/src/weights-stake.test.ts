import { describe, expect, it } from "vitest";
import { meetsStakeThreshold, weightsStake, weightsStakeRaw } from "./weights-stake.js";

const U64_MAX = (1n << 64n) - 1n;
const none = { childProportions: [], parents: [], taoWeight: 0n };

describe("the stake check_weights_min_stake weighs", () => {
  it("is the alpha on the subnet, and at the threshold passes (>=), one below fails", () => {
    const inputs = { ...none, alpha: 1_000n, rootTao: 0n };
    expect(weightsStake(1, inputs)).toBe(1_000n);
    expect(meetsStakeThreshold(1, inputs, 1_000n)).toBe(true);
    expect(meetsStakeThreshold(1, inputs, 1_001n)).toBe(false);
  });

  it("adds root TAO scaled by TaoWeight (U96F32, truncated)", () => {
    // TaoWeight u64::MAX / 2: share floor(2^63 - 0.5 ... ) -> just under one half.
    const half = U64_MAX / 2n;
    const inputs = { ...none, alpha: 0n, rootTao: 1_000_000n, taoWeight: half };
    expect(weightsStake(1, inputs)).toBe(499_999n);
    expect(meetsStakeThreshold(1, inputs, 500_000n)).toBe(false);
    // The full weight: u64::MAX / u64::MAX = 1 exactly.
    expect(weightsStake(1, { ...inputs, taoWeight: U64_MAX })).toBe(1_000_000n);
  });

  it("gives children their share and takes the parents'", () => {
    const quarter = U64_MAX / 4n;
    const withChild = { ...none, alpha: 1_000_000n, rootTao: 0n, childProportions: [quarter] };
    expect(weightsStake(1, withChild)).toBe(750_000n);
    const withParent = {
      ...none,
      alpha: 0n,
      rootTao: 0n,
      parents: [{ proportion: quarter, alpha: 4_000_000n, rootTao: 0n }],
    };
    expect(weightsStake(1, withParent)).toBe(999_999n);
    // Never below zero, whatever the children take.
    expect(weightsStakeRaw(1, { ...withChild, childProportions: [U64_MAX, U64_MAX] })).toBe(0n);
  });

  it("on root the alpha is not redistributed", () => {
    const inputs = { ...none, alpha: 10n, rootTao: 0n, childProportions: [U64_MAX] };
    expect(weightsStake(0, inputs)).toBe(10n);
  });
});
