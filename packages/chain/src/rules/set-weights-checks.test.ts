import { describe, expect, it } from "vitest";
import { setWeights, type WeightsStateView } from "./set-weights-checks.js";

const HOTKEY = new Uint8Array(32).fill(7);

// A subnet (netuid 1) with 4 neurons; the signer is uid 0 with a validator permit.
function view(overrides: Partial<WeightsStateView> = {}): WeightsStateView {
  return {
    commitRevealEnabled: () => false,
    subnetExists: (n) => n === 1,
    mechanismCount: () => 1,
    subnetworkN: () => 4,
    uidOf: () => 0,
    uidExists: (_n, uid) => uid < 4,
    hasMinStake: () => true,
    weightsVersionKey: () => 0n,
    lastUpdate: () => 0n,
    weightsSetRateLimit: () => 100n,
    validatorPermit: () => true,
    minAllowedWeights: () => 1,
    maxWeightsLimit: () => 0xffff,
    ...overrides,
  };
}

const run = (
  v: WeightsStateView,
  uids: number[],
  values: number[],
  options: { netuid?: number; block?: number; version?: bigint } = {},
) =>
  setWeights(
    v,
    HOTKEY,
    options.block ?? 1000,
    options.netuid ?? 1,
    uids,
    values,
    options.version ?? 0n,
  );

describe("set_weights checks (spec 393 order)", () => {
  it("stores max-upscaled weights under the main mechanism and moves LastUpdate", () => {
    expect(run(view(), [1, 2], [10, 20])).toEqual({
      ok: true,
      uid: 0,
      netuidIndex: 1,
      weights: [
        [1, 32768],
        [2, 65535],
      ],
      updateLastUpdate: true,
    });
  });

  it("names each failing check", () => {
    const cases: [
      string,
      WeightsStateView,
      number[],
      number[],
      { netuid?: number; block?: number; version?: bigint }?,
    ][] = [
      ["CommitRevealEnabled", view({ commitRevealEnabled: () => true }), [1], [1]],
      ["CanNotSetRootNetworkWeights", view(), [1], [1], { netuid: 0 }],
      ["WeightVecNotEqualSize", view(), [1, 2], [1]],
      ["MechanismDoesNotExist", view(), [1], [1], { netuid: 9 }],
      ["MechanismDoesNotExist", view({ mechanismCount: () => 0 }), [1], [1]],
      ["UidsLengthExceedUidsInSubNet", view(), [0, 1, 2, 3, 3], [1, 1, 1, 1, 1]],
      ["HotKeyNotRegisteredInSubNet", view({ uidOf: () => undefined }), [1], [1]],
      ["NotEnoughStakeToSetWeights", view({ hasMinStake: () => false }), [1], [1]],
      [
        "IncorrectWeightVersionKey",
        view({ weightsVersionKey: () => 5n }),
        [1],
        [1],
        { version: 4n },
      ],
      ["SettingWeightsTooFast", view({ lastUpdate: () => 950n }), [1], [1]],
      ["NeuronNoValidatorPermit", view({ validatorPermit: () => false }), [1], [1]],
      ["DuplicateUids", view(), [1, 1], [1, 1]],
      ["UidVecContainInvalidOne", view(), [1, 7], [1, 1]],
      ["WeightVecLengthIsLow", view({ minAllowedWeights: () => 3 }), [1, 2], [1, 1]],
      ["MaxWeightExceeded", view({ maxWeightsLimit: () => 30000 }), [1, 2], [65535, 1]],
    ];
    for (const [error, v, uids, values, options] of cases) {
      expect(run(v, uids, values, options), error).toEqual({ ok: false, error });
    }
  });

  it("reports the first failing check when several fail", () => {
    // Unequal lengths, duplicates, an unknown uid, an unregistered hotkey: the length check is first.
    const everything = view({ uidOf: () => undefined, weightsVersionKey: () => 9n });
    expect(run(everything, [1, 1, 9], [1, 1])).toEqual({
      ok: false,
      error: "WeightVecNotEqualSize",
    });
    // Registration comes before the version key, the version key before the rate limit.
    expect(run(everything, [1, 1], [1, 1])).toEqual({
      ok: false,
      error: "HotKeyNotRegisteredInSubNet",
    });
    const stale = view({ weightsVersionKey: () => 9n, lastUpdate: () => 999n });
    expect(run(stale, [1, 1], [1, 1])).toEqual({ ok: false, error: "IncorrectWeightVersionKey" });
    // Rate limit before permit, permit before duplicates, duplicates before invalid uids.
    const busy = view({ lastUpdate: () => 999n, validatorPermit: () => false });
    expect(run(busy, [1, 1], [1, 1])).toEqual({ ok: false, error: "SettingWeightsTooFast" });
    expect(run(view({ validatorPermit: () => false }), [1, 1], [1, 1])).toEqual({
      ok: false,
      error: "NeuronNoValidatorPermit",
    });
    expect(run(view(), [9, 9], [1, 1])).toEqual({ ok: false, error: "DuplicateUids" });
    // Commit-reveal is checked before everything else, even on an unknown subnet (its default is on).
    expect(run(view({ commitRevealEnabled: () => true }), [1, 2], [1], { netuid: 9 })).toEqual({
      ok: false,
      error: "CommitRevealEnabled",
    });
  });

  it("lets a neuron weight only itself without a permit, a length minimum or a max limit", () => {
    const strict = view({
      validatorPermit: () => false,
      minAllowedWeights: () => 3,
      maxWeightsLimit: () => 1,
    });
    expect(run(strict, [0], [5])).toMatchObject({ ok: true, weights: [[0, 65535]] });
    expect(run(strict, [1], [5])).toEqual({ ok: false, error: "NeuronNoValidatorPermit" });
  });

  it("refuses [1, 1] at MaxWeightsLimit 32767 and accepts it at 32768 (each weight is half)", () => {
    // Normalised, each weight is 0.5: above 32767/65535, not above 32768/65535.
    expect(run(view({ maxWeightsLimit: () => 32767 }), [1, 2], [1, 1])).toEqual({
      ok: false,
      error: "MaxWeightExceeded",
    });
    expect(run(view({ maxWeightsLimit: () => 32768 }), [1, 2], [1, 1])).toMatchObject({
      ok: true,
      weights: [
        [1, 65535],
        [2, 65535],
      ],
    });
  });

  it("applies the rate limit from the last update, and never to a first update", () => {
    expect(run(view({ lastUpdate: () => 900n }), [1], [1], { block: 1000 }).ok).toBe(true);
    expect(run(view({ lastUpdate: () => 901n }), [1], [1], { block: 1000 })).toEqual({
      ok: false,
      error: "SettingWeightsTooFast",
    });
    expect(
      run(view({ lastUpdate: () => 0n, weightsSetRateLimit: () => 10n ** 18n }), [1], [1]).ok,
    ).toBe(true);
  });

  it("requires min(SubnetworkN, MinAllowedWeights) weights and accepts a newer version key", () => {
    expect(run(view({ minAllowedWeights: () => 1024 }), [0, 1, 2, 3], [1, 1, 1, 1]).ok).toBe(true);
    expect(run(view({ minAllowedWeights: () => 1024 }), [1, 2, 3], [1, 1, 1])).toEqual({
      ok: false,
      error: "WeightVecLengthIsLow",
    });
    expect(run(view({ weightsVersionKey: () => 5n }), [1], [1], { version: 6n }).ok).toBe(true);
  });
});
