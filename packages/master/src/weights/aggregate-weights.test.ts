import { describe, expect, it } from "vitest";
import {
  type AggregateOptions,
  aggregateWeights,
  BURN_UID,
  type ChallengeWeightsInput,
} from "./aggregate-weights.js";

const UIDS = new Map([
  ["owner", 0],
  ["alice", 1],
  ["bob", 2],
  ["carol", 3],
  ["dave", 4],
]);
const burn: AggregateOptions = { uids: UIDS, failurePolicy: "burn" };
const redistribute: AggregateOptions = { uids: UIDS, failurePolicy: "redistribute" };

const ok = (
  slug: string,
  emission: number,
  weights: Record<string, unknown>,
  epoch: number | null = 1,
): ChallengeWeightsInput => ({
  slug,
  emission_percent: emission,
  outcome: { ok: true, epoch, weights },
});
const failed = (slug: string, emission: number, error = "HTTP 500"): ChallengeWeightsInput => ({
  slug,
  emission_percent: emission,
  outcome: { ok: false, error },
});

/** uid -> weight of an aggregate, for readable assertions. */
const byUid = (result: { uids: number[]; weights: number[] }) =>
  Object.fromEntries(result.uids.map((uid, i) => [uid, result.weights[i]]));
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

function expectWellFormed(result: ReturnType<typeof aggregateWeights>) {
  expect(result.uids.length).toBe(result.weights.length);
  expect(result.weights_u16.length).toBe(result.uids.length);
  expect([...result.uids].sort((a, b) => a - b)).toEqual(result.uids);
  expect(new Set(result.uids).size).toBe(result.uids.length);
  for (const w of result.weights) {
    expect(Number.isFinite(w)).toBe(true);
    expect(w).toBeGreaterThanOrEqual(0);
    expect(w).toBeLessThanOrEqual(1);
  }
  expect(sum(result.weights)).toBeCloseTo(1, 12);
  expect(sum(result.weights_u16)).toBe(65_535);
}

describe("aggregateWeights", () => {
  it("normalises one challenge's weights to 1 and maps hotkeys to uids", () => {
    const result = aggregateWeights([ok("a", 100, { alice: 1, bob: 3 })], burn);
    expectWellFormed(result);
    expect(result.burned).toBe(false);
    expect(result.uids).toEqual([1, 2]);
    expect(result.weights[0]).toBeCloseTo(0.25, 15);
    expect(result.weights[1]).toBeCloseTo(0.75, 15);
    expect(result.weights_u16).toEqual([16_384, 49_151]);
    expect(result.hotkeys).toEqual({ alice: 0.25, bob: 0.75 });
    expect(result.sources).toEqual([
      {
        slug: "a",
        emission_percent: 100,
        status: "ok",
        epoch: 1,
        hotkeys: 2,
        share: 1,
        error: null,
      },
    ]);
  });

  it("scales to weights of any magnitude the same way", () => {
    const small = aggregateWeights([ok("a", 100, { alice: 1e-300, bob: 3e-300 })], burn);
    const large = aggregateWeights([ok("a", 100, { alice: 1e300, bob: 3e300 })], burn);
    expect(small.weights).toEqual(large.weights);
    expect(small.weights[1]).toBeCloseTo(0.75, 12);
  });

  it("survives values whose sum overflows to Infinity", () => {
    const result = aggregateWeights(
      [ok("a", 100, { alice: Number.MAX_VALUE, bob: Number.MAX_VALUE })],
      burn,
    );
    expectWellFormed(result);
    expect(result.weights).toEqual([0.5, 0.5]);
  });

  it("takes the smallest positive double as a real weight", () => {
    const result = aggregateWeights([ok("a", 100, { alice: Number.MIN_VALUE })], burn);
    expect(byUid(result)).toEqual({ 1: 1 });
  });

  it.each([
    ["NaN", Number.NaN],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["-Infinity", Number.NEGATIVE_INFINITY],
    ["a negative value", -0.5],
    ["zero", 0],
    ["negative zero", -0],
    ["a numeric string", "0.5"],
    ["null", null],
    ["undefined", undefined],
    ["a boolean", true],
    ["an object", { value: 1 }],
    ["a bigint", 5n],
  ])("drops %s and counts it, keeping the rest", (_label, bad) => {
    const result = aggregateWeights([ok("a", 100, { alice: 1, bob: bad })], burn);
    expectWellFormed(result);
    expect(byUid(result)).toEqual({ 1: 1 });
    expect(result.hotkeys).toEqual({ alice: 1 });
    expect(result.cleaning).toEqual([{ slug: "a", dropped_invalid: 1, dropped_unknown: 0 }]);
    expect(result.sources[0]).toMatchObject({ status: "ok", hotkeys: 1 });
  });

  it("combines challenges by emission share and sums per hotkey", () => {
    const result = aggregateWeights(
      [ok("a", 60, { alice: 1, bob: 1 }), ok("b", 40, { bob: 1, carol: 3 })],
      burn,
    );
    expectWellFormed(result);
    const w = byUid(result);
    expect(w[1]).toBeCloseTo(0.3, 12); // 0.6 x 0.5
    expect(w[2]).toBeCloseTo(0.3 + 0.1, 12); // 0.6 x 0.5 + 0.4 x 0.25
    expect(w[3]).toBeCloseTo(0.3, 12); // 0.4 x 0.75
    expect(result.sources.map((s) => s.share)).toEqual([0.6, 0.4]);
  });

  it("normalises emission over the challenges that count, even when they do not add to 100", () => {
    const result = aggregateWeights([ok("a", 30, { alice: 1 }), ok("b", 20, { bob: 1 })], burn);
    expectWellFormed(result);
    expect(byUid(result)[1]).toBeCloseTo(0.6, 12);
    expect(byUid(result)[2]).toBeCloseTo(0.4, 12);
  });

  it("gives a challenge with emission 0 no share, whatever it answers", () => {
    const result = aggregateWeights(
      [ok("a", 50, { alice: 1 }), ok("zero", 0, { bob: 100, carol: 100 })],
      burn,
    );
    expectWellFormed(result);
    expect(byUid(result)).toEqual({ 1: 1 });
    expect(result.sources[1]).toMatchObject({
      slug: "zero",
      emission_percent: 0,
      status: "ok",
      hotkeys: 2,
      share: 0,
    });
  });

  it("treats a non-finite or negative emission_percent as 0", () => {
    for (const emission of [Number.NaN, Number.POSITIVE_INFINITY, -10]) {
      const result = aggregateWeights(
        [ok("a", 50, { alice: 1 }), ok("odd", emission, { bob: 1 })],
        burn,
      );
      expect(byUid(result)).toEqual({ 1: 1 });
      expect(result.sources[1]!.emission_percent).toBe(0);
    }
  });

  it("burns everything when every challenge has emission 0", () => {
    const result = aggregateWeights([ok("a", 0, { alice: 1 }), ok("b", 0, { bob: 1 })], burn);
    expect(result).toMatchObject({
      uids: [BURN_UID],
      weights: [1],
      weights_u16: [65_535],
      burned: true,
    });
    expect(result.sources.every((s) => s.share === 0)).toBe(true);
  });

  it("burns everything when there is no challenge at all", () => {
    for (const options of [burn, redistribute]) {
      const result = aggregateWeights([], options);
      expect(result).toEqual({
        uids: [0],
        weights: [1],
        weights_u16: [65_535],
        hotkeys: {},
        burned: true,
        sources: [],
        cleaning: [],
      });
    }
  });

  describe("a failing challenge", () => {
    const healthy = [ok("a", 50, { alice: 1 }), ok("b", 25, { bob: 1 })];

    it("with burn (default): its share goes to uid 0 and nobody else gains", () => {
      const everyone = aggregateWeights([...healthy, ok("c", 25, { carol: 1 })], burn);
      const result = aggregateWeights(
        [...healthy, failed("c", 25, "timed out after 10000 ms")],
        burn,
      );
      expectWellFormed(result);
      expect(result.burned).toBe(false);
      expect(byUid(result)).toEqual({ 0: 0.25, 1: 0.5, 2: 0.25 });
      expect(byUid(result)[1]).toBe(byUid(everyone)[1]);
      expect(byUid(result)[2]).toBe(byUid(everyone)[2]);
      expect(result.sources[2]).toEqual({
        slug: "c",
        emission_percent: 25,
        status: "failed",
        epoch: null,
        hotkeys: 0,
        share: 0,
        error: "timed out after 10000 ms",
      });
      expect(result.hotkeys).toEqual({ alice: 0.5, bob: 0.25 });
    });

    it("with redistribute: the others share it in proportion to their emission", () => {
      const result = aggregateWeights([...healthy, failed("c", 25)], redistribute);
      expectWellFormed(result);
      expect(byUid(result)[1]).toBeCloseTo(2 / 3, 12);
      expect(byUid(result)[2]).toBeCloseTo(1 / 3, 12);
      expect(result.uids).not.toContain(0);
      expect(result.sources.map((s) => s.share)).toEqual([2 / 3, 1 / 3, 0]);
    });

    it("burns everything when every challenge fails, under either policy", () => {
      for (const options of [burn, redistribute]) {
        const result = aggregateWeights([failed("a", 50), failed("b", 50, "HTTP 401")], options);
        expect(result).toMatchObject({
          uids: [0],
          weights: [1],
          weights_u16: [65_535],
          burned: true,
          hotkeys: {},
        });
        expect(result.sources.map((s) => [s.status, s.error])).toEqual([
          ["failed", "HTTP 500"],
          ["failed", "HTTP 401"],
        ]);
      }
    });

    it("with emission 0 changes nothing", () => {
      const a = aggregateWeights(healthy, burn);
      const b = aggregateWeights([...healthy, failed("c", 0)], burn);
      expect(b.uids).toEqual(a.uids);
      expect(b.weights).toEqual(a.weights);
    });
  });

  describe("a challenge that names nobody", () => {
    it.each([
      ["an empty object", {}],
      ["all zeros", { alice: 0, bob: 0 }],
      ["only invalid values", { alice: Number.NaN, bob: -1, carol: Number.POSITIVE_INFINITY }],
    ])("(%s) is 'empty' and its share follows the failure policy", (_label, weights) => {
      const withBurn = aggregateWeights(
        [ok("a", 50, { dave: 1 }), ok("nobody", 50, weights)],
        burn,
      );
      expectWellFormed(withBurn);
      expect(byUid(withBurn)).toEqual({ 0: 0.5, 4: 0.5 });
      expect(withBurn.sources[1]).toMatchObject({
        status: "empty",
        hotkeys: 0,
        share: 0,
        error: null,
        epoch: 1,
      });

      const withRedistribute = aggregateWeights(
        [ok("a", 50, { dave: 1 }), ok("nobody", 50, weights)],
        redistribute,
      );
      expect(byUid(withRedistribute)).toEqual({ 4: 1 });
    });

    it("alone burns everything", () => {
      expect(aggregateWeights([ok("a", 100, {})], burn)).toMatchObject({
        uids: [0],
        weights: [1],
        burned: true,
      });
    });
  });

  describe("unknown hotkeys", () => {
    it("are dropped before normalising, so the challenge's share stays with its known miners", () => {
      const result = aggregateWeights(
        [ok("a", 50, { alice: 1, stranger: 9 }), ok("b", 50, { bob: 1 })],
        burn,
      );
      expectWellFormed(result);
      expect(byUid(result)).toEqual({ 1: 0.5, 2: 0.5 });
      expect(result.hotkeys).not.toHaveProperty("stranger");
      expect(result.cleaning[0]).toEqual({ slug: "a", dropped_invalid: 0, dropped_unknown: 1 });
      expect(result.sources[0]).toMatchObject({ hotkeys: 1, share: 0.5 });
    });

    it("leave a challenge of only strangers empty, under the failure policy", () => {
      const result = aggregateWeights(
        [ok("a", 50, { alice: 1 }), ok("b", 50, { stranger: 1, other: 2 })],
        burn,
      );
      expect(byUid(result)).toEqual({ 0: 0.5, 1: 0.5 });
      expect(result.sources[1]).toMatchObject({ status: "empty", hotkeys: 0 });
      expect(result.cleaning[1]!.dropped_unknown).toBe(2);
    });

    it("burn everything when nobody is known", () => {
      const result = aggregateWeights([ok("a", 100, { stranger: 1 })], redistribute);
      expect(result).toMatchObject({ uids: [0], weights: [1], burned: true });
    });
  });

  it("merges a hotkey that holds uid 0 with the burned share", () => {
    const result = aggregateWeights([ok("a", 50, { owner: 1 }), failed("b", 50)], burn);
    expectWellFormed(result);
    expect(byUid(result)).toEqual({ 0: 1 });
    expect(result.burned).toBe(false);
  });

  it("adds up hotkeys that a metagraph maps to one uid", () => {
    const uids = new Map([
      ["alice", 1],
      ["alice-old", 1],
      ["bob", 2],
    ]);
    const result = aggregateWeights([ok("a", 100, { alice: 1, "alice-old": 1, bob: 2 })], {
      uids,
      failurePolicy: "burn",
    });
    expect(byUid(result)).toEqual({ 1: 0.5, 2: 0.5 });
  });

  it("without a metagraph: computes the hotkey view but burns the uid vector", () => {
    const result = aggregateWeights([ok("a", 75, { alice: 1, bob: 1 }), failed("b", 25)], {
      uids: null,
      failurePolicy: "burn",
    });
    expect(result).toMatchObject({ uids: [0], weights: [1], weights_u16: [65_535], burned: true });
    expect(result.hotkeys).toEqual({ alice: 0.375, bob: 0.375 });
    expect(result.cleaning[0]!.dropped_unknown).toBe(0);
    expect(result.sources[0]!.share).toBe(0.75);
  });

  it("treats hotkeys named like Object.prototype members as plain strings", () => {
    const weights = JSON.parse('{"__proto__": 1, "constructor": 1, "toString": 2}') as Record<
      string,
      unknown
    >;
    const uids = new Map([
      ["__proto__", 1],
      ["constructor", 2],
      ["toString", 3],
    ]);
    const result = aggregateWeights([ok("a", 100, weights)], { uids, failurePolicy: "burn" });
    expect(byUid(result)).toEqual({ 1: 0.25, 2: 0.25, 3: 0.5 });
    expect(Object.keys(result.hotkeys).sort()).toEqual(["__proto__", "constructor", "toString"]);
    expect(Object.getPrototypeOf(result.hotkeys)).toBe(Object.prototype);
    expect(JSON.parse(JSON.stringify(result.hotkeys))).toEqual(
      JSON.parse('{"__proto__": 0.25, "constructor": 0.25, "toString": 0.5}'),
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("keeps epoch and null epoch from the replies", () => {
    const result = aggregateWeights(
      [ok("a", 50, { alice: 1 }, 42), ok("b", 50, { bob: 1 }, null)],
      burn,
    );
    expect(result.sources.map((s) => s.epoch)).toEqual([42, null]);
  });

  describe("invariants over random inputs", () => {
    // A small deterministic PRNG (mulberry32): failures reproduce.
    function random(seed: number) {
      let a = seed;
      return () => {
        a = (a + 0x6d2b79f5) | 0;
        let t = Math.imul(a ^ (a >>> 15), 1 | a);
        t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
        return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
      };
    }
    const hotkeyPool = ["owner", "alice", "bob", "carol", "dave", "stranger", "other"];
    const odd = [Number.NaN, -1, 0, Number.POSITIVE_INFINITY, 1e-320, 1e308];

    function randomInputs(next: () => number): ChallengeWeightsInput[] {
      const count = Math.floor(next() * 6);
      return Array.from({ length: count }, (_, i) => {
        const emission = next() < 0.2 ? 0 : Math.round(next() * 100);
        if (next() < 0.25) return failed(`c${i}`, emission);
        const weights: Record<string, number> = {};
        for (const hotkey of hotkeyPool) {
          if (next() < 0.5)
            weights[hotkey] = next() < 0.15 ? odd[Math.floor(next() * odd.length)]! : next() * 10;
        }
        return ok(`c${i}`, emission, weights);
      });
    }

    it("always yields a well-formed vector summing to 1 (65535 in u16)", () => {
      const next = random(1234);
      for (let run = 0; run < 500; run++) {
        const inputs = randomInputs(next);
        for (const options of [burn, redistribute])
          expectWellFormed(aggregateWeights(inputs, options));
      }
    });

    it("with burn: a challenge failing never raises anybody else's weight", () => {
      const next = random(99);
      for (let run = 0; run < 300; run++) {
        const inputs = randomInputs(next);
        const victim = inputs.findIndex((input) => input.outcome.ok);
        if (victim < 0) continue;
        const before = byUid(aggregateWeights(inputs, burn));
        const broken = inputs.map((input, i) =>
          i === victim ? failed(input.slug, input.emission_percent) : input,
        );
        const after = byUid(aggregateWeights(broken, burn));
        for (const [uid, weight] of Object.entries(after)) {
          if (uid === "0") continue;
          expect(weight).toBeLessThanOrEqual((before[uid] ?? 0) + 1e-12);
        }
      }
    });
  });
});
