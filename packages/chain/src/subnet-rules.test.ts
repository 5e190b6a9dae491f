import { u8aToHex } from "@polkadot/util";
import { encodeAddress } from "@polkadot/util-crypto";
import { describe, expect, it } from "vitest";
import {
  allowedFrom,
  buildWeights,
  checkCommitTimelocked,
  checkRevealedWeights,
  checkSetWeights,
  isMaxLimited,
  LocalCheckError,
  localCheckError,
  maxUpscaleU16,
  type SubnetRules,
} from "./subnet-rules.js";

const key = (i: number) => new Uint8Array(32).fill(i + 1);
const address = (i: number, prefix = 42) => encodeAddress(key(i), prefix);

/** Rules of a subnet whose uid i holds hotkey `address(i)` (null where `empty` says). */
function rules(n: number, extra: Partial<SubnetRules> = {}, empty: number[] = []): SubnetRules {
  const hotkeys = Array.from({ length: n }, (_, i) => (empty.includes(i) ? null : address(i)));
  const uids = new Map<string, number>();
  const uidsByKey = new Map<string, number>();
  hotkeys.forEach((h, i) => {
    if (h === null) return;
    uids.set(h, i);
    uidsByKey.set(u8aToHex(key(i)), i);
  });
  return {
    netuid: 1,
    block: { number: 100, hash: `0x${"1".repeat(64)}` },
    best: { number: 102, hash: `0x${"2".repeat(64)}` },
    exists: true,
    mechanismCount: 1,
    commitRevealEnabled: false,
    subnetworkN: n,
    maxWeightsLimit: 65535,
    minAllowedWeights: 1,
    weightsVersionKey: 0n,
    weightsSetRateLimit: 100n,
    tempo: 360,
    validatorPermit: hotkeys.map((_, i) => i === 0),
    lastUpdate: hotkeys.map(() => 1n),
    bestLastUpdate: hotkeys.map(() => 1n),
    hotkeys,
    uids,
    uidsByKey,
    runtime: { specVersion: 393, epochModel: "block-number", ownerExempt: false },
    ownerUid: undefined,
    stake: undefined,
    ...extra,
  };
}

// A deterministic generator, so a failing case can be replayed.
function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe("buildWeights", () => {
  it("maps hotkeys by public key, burns the unpaid share and the unknown hotkeys' weight", () => {
    const r = rules(4);
    const built = buildWeights(
      {
        [address(1, 0)]: 0.2, // the same key in another SS58 prefix
        [address(2)]: 0.4,
        [address(9)]: 0.1, // not on the subnet
        "not an address": 0.05,
        [address(3)]: Number.NaN,
      },
      r,
    );
    expect(built).toMatchObject({ mapped: 2, dropped: 2, capped: 0, padded: 0, allBurn: false });
    expect(built.droppedWeight).toBeCloseTo(0.15, 12);
    // Burn: 1 - 0.75 paid + 0.15 dropped = 0.4, as much as uid 2.
    expect(built.burnWeight).toBeCloseTo(0.4, 12);
    expect(built.uids).toEqual([0, 1, 2]);
    expect(built.weights).toEqual([65535, 32768, 65535]);
  });

  it("scales a snapshot that sums past 1, and flags an all-burn vector", () => {
    const r = rules(3);
    expect(buildWeights({ [address(1)]: 3, [address(2)]: 1 }, r).weights).toEqual([65535, 21845]);
    expect(buildWeights({}, r)).toMatchObject({ uids: [0], weights: [65535], allBurn: true });
    expect(buildWeights({ [address(7)]: 1 }, r)).toMatchObject({
      uids: [0],
      allBurn: true,
      dropped: 1,
    });
    // Nothing maps and the burn uid is empty: nothing can be sent.
    expect(() => buildWeights({ [address(7)]: 1 }, rules(3, {}, [0]))).toThrow(LocalCheckError);
    expect(() => buildWeights({ [address(7)]: 1 }, rules(3, {}, [0]))).toThrow(/^EmptyVector: /);
  });

  it("caps at MaxWeightsLimit exactly as the chain checks it, keeping the order of the weights", () => {
    const next = random(42);
    for (let round = 0; round < 300; round++) {
      const k = 2 + Math.floor(next() * 24);
      const n = k + 1;
      // Feasible limits only: k weights can each stay below limit when k × limit >= 1.
      const lowest = Math.ceil(65535 / k);
      const maxWeightsLimit = lowest + Math.floor(next() * (65534 - lowest));
      const weights: Record<string, number> = {};
      for (let i = 1; i <= k; i++) weights[address(i)] = next() ** 3 + (next() < 0.1 ? 0 : 1e-6);
      const total = Object.values(weights).reduce((a, b) => a + b, 0);
      for (const h of Object.keys(weights)) weights[h] = (weights[h] as number) / total;
      const r = rules(n, { maxWeightsLimit, validatorPermit: Array(n).fill(true) });
      const built = buildWeights(weights, r);
      const sent = built.weights;
      const context = JSON.stringify({ round, k, maxWeightsLimit });
      expect(maxUpscaleU16(sent), context).toEqual(sent);
      expect(isMaxLimited(sent, maxWeightsLimit), context).toBe(true);
      // Whatever the chain runs next passes too.
      expect(
        checkSetWeights(r, key(0), { uids: built.uids, weights: sent, versionKey: 0n }, 102 + 100),
      ).toEqual({
        ok: true,
        uid: 0,
      });
      const byUid = new Map(built.uids.map((u, i) => [u, sent[i] as number]));
      const ordered = Object.entries(weights)
        .map(([h, w]) => [w, byUid.get(r.uids.get(h) as number) ?? 0] as const)
        .sort((a, b) => a[0] - b[0]);
      for (let i = 1; i < ordered.length; i++) {
        expect((ordered[i]?.[1] as number) + 1, context).toBeGreaterThanOrEqual(
          ordered[i - 1]?.[1] as number,
        );
      }
    }
  });

  it("refuses a limit no vector of that many weights can meet, rather than paying unscored uids", () => {
    const r = rules(10, { maxWeightsLimit: 20000 });
    // Two weights (no burn): each would need to be at most 0.305 of the sum.
    const error = (() => {
      try {
        buildWeights({ [address(1)]: 0.5, [address(2)]: 0.5 }, r);
      } catch (e) {
        return e;
      }
    })() as LocalCheckError;
    expect(error).toBeInstanceOf(LocalCheckError);
    expect(error.check).toBe("MaxWeightExceeded");
    expect(error.message).toMatch(/at least 4 are needed/);
    // Four are enough: each gets a quarter.
    const four = buildWeights(
      { [address(1)]: 0.7, [address(2)]: 0.1, [address(3)]: 0.1, [address(4)]: 0.1 },
      r,
    );
    expect(four.capped).toBeGreaterThanOrEqual(1);
    expect(isMaxLimited(four.weights, 20000)).toBe(true);
  });

  it("pads with zero weights to min(MinAllowedWeights, SubnetworkN), lowest registered uids first", () => {
    const r = rules(8, { minAllowedWeights: 5 }, [1, 3]);
    const built = buildWeights({ [address(6)]: 1 }, r);
    expect(built.uids).toEqual([0, 2, 4, 5, 6]);
    expect(built.weights).toEqual([0, 0, 0, 0, 65535]);
    expect(built.padded).toBe(4);
    expect(
      checkSetWeights(r, key(0), { uids: built.uids, weights: built.weights, versionKey: 0n }, 500)
        .ok,
    ).toBe(true);
    // Never more than the subnet holds.
    expect(buildWeights({ [address(1)]: 1 }, rules(3, { minAllowedWeights: 1024 })).uids).toEqual([
      0, 1, 2,
    ]);
    // A self-weight is exempt on chain and left alone.
    expect(
      buildWeights({ [address(2)]: 1 }, rules(4, { minAllowedWeights: 3 }), { ownUid: 2 }).uids,
    ).toEqual([2]);
  });
});

describe("checkSetWeights", () => {
  const vector = (uids: number[], weights = uids.map(() => 1), versionKey = 0n) => ({
    uids,
    weights,
    versionKey,
  });

  it("reports the first failing check in the chain's order", () => {
    const r = rules(3, { weightsVersionKey: 3n });
    // Not permitted AND duplicated AND too old a version: the version key comes first.
    expect(checkSetWeights(r, key(1), vector([1, 1], [1, 1], 2n), 500)).toEqual({
      ok: false,
      check: "IncorrectWeightVersionKey",
    });
    expect(checkSetWeights(r, key(1), vector([1, 1], [1, 1], 3n), 500)).toEqual({
      ok: false,
      check: "NeuronNoValidatorPermit",
    });
    expect(checkSetWeights(r, key(0), vector([1, 1], [1, 1], 3n), 500).ok).toBe(false);
    expect(checkSetWeights({ ...r, commitRevealEnabled: true }, key(0), vector([0]), 500)).toEqual({
      ok: false,
      check: "CommitRevealEnabled",
    });
    expect(checkSetWeights(r, key(5), vector([0], [1], 3n), 500)).toEqual({
      ok: false,
      check: "HotKeyNotRegisteredInSubNet",
    });
  });

  it("names the block from which the rate limit allows it", () => {
    const r = rules(3, { bestLastUpdate: [400n, 1n, 1n], weightsSetRateLimit: 100n });
    expect(allowedFrom(r, 0)).toBe(500);
    expect(checkSetWeights(r, key(0), vector([1]), 499)).toEqual({
      ok: false,
      check: "SettingWeightsTooFast",
      allowedFrom: 500,
    });
    expect(checkSetWeights(r, key(0), vector([1]), 500)).toEqual({ ok: true, uid: 0 });
    // LastUpdate 0: never set, never limited.
    expect(allowedFrom({ ...r, bestLastUpdate: [0n] }, 0)).toBe(0);
  });
});

describe("the subnet owner's exemption and the minimum stake", () => {
  const vector = (uids: number[]) => ({ uids, weights: uids.map(() => 1), versionKey: 0n });
  const spec = (specVersion: number) => ({
    specVersion,
    epochModel: "block-number" as const,
    ownerExempt: specVersion >= 401,
  });
  // uid 0 holds the only permit; uid 1 is the owner's hotkey without one.
  const base = (specVersion: number, extra: Partial<SubnetRules> = {}) =>
    rules(3, {
      runtime: spec(specVersion),
      ownerUid: 1,
      lastUpdate: [0n, 0n, 0n],
      bestLastUpdate: [0n, 0n, 0n],
      ...extra,
    });
  const stake = (i: number, meets: boolean) => ({
    hotkey: u8aToHex(key(i)),
    stake: meets ? 5_000n : 10n,
    threshold: 1_000n,
    meets,
  });

  it("from spec 401 the owner's uid sets weights without a validator permit; on 393 it cannot", () => {
    expect(checkSetWeights(base(424), key(1), vector([0, 2]), 500)).toEqual({ ok: true, uid: 1 });
    expect(checkSetWeights(base(401), key(1), vector([0, 2]), 500)).toEqual({ ok: true, uid: 1 });
    expect(checkSetWeights(base(393), key(1), vector([0, 2]), 500)).toEqual({
      ok: false,
      check: "NeuronNoValidatorPermit",
    });
    // Another hotkey without a permit is still refused on 424.
    expect(checkSetWeights(base(424), key(2), vector([0, 1]), 500)).toEqual({
      ok: false,
      check: "NeuronNoValidatorPermit",
    });
    // A commit's weights meet the same check when revealed.
    expect(checkRevealedWeights(base(424), key(1), vector([0, 2]), 500).ok).toBe(true);
    expect(checkRevealedWeights(base(393), key(1), vector([0, 2]), 500).ok).toBe(false);
  });

  it("refuses a stake below StakeThreshold first, by name, before sending; the owner is exempt from 401", () => {
    // Below the threshold AND too old a version key: the pool's stake check comes first.
    const low = base(393, { stake: stake(0, false), weightsVersionKey: 9n });
    expect(checkSetWeights(low, key(0), vector([1, 2]), 500)).toEqual({
      ok: false,
      check: "NotEnoughStakeToSetWeights",
    });
    const commitState = {
      commitRevealVersion: 4,
      payloadVersion: 4,
      ownCommitsInEpoch: 0,
      maxUnrevealedCommits: 10,
    };
    expect(
      checkCommitTimelocked(
        { ...low, commitRevealEnabled: true },
        key(0),
        vector([1, 2]),
        commitState,
        500,
      ),
    ).toEqual({ ok: false, check: "NotEnoughStakeToSetWeights" });
    const error = localCheckError({ ok: false, check: "NotEnoughStakeToSetWeights" }, low);
    expect(error.message).toMatch(/StakeAmountTooLow.*stake 10, threshold 1000/);
    // Enough stake passes; the owner passes without it from 401, not on 393.
    expect(
      checkSetWeights(base(393, { stake: stake(0, true) }), key(0), vector([1, 2]), 500).ok,
    ).toBe(true);
    expect(
      checkSetWeights(base(424, { stake: stake(1, false) }), key(1), vector([0, 2]), 500),
    ).toEqual({
      ok: true,
      uid: 1,
    });
    expect(
      checkSetWeights(base(393, { stake: stake(1, false) }), key(1), vector([0, 2]), 500),
    ).toEqual({
      ok: false,
      check: "NotEnoughStakeToSetWeights",
    });
  });
});
