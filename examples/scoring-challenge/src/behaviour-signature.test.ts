import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  behaviourDistance,
  COPY_DISTANCE,
  isBehaviouralCopy,
  MIN_SHARED_POINTS,
} from "./behaviour-signature.js";
import type { BehaviourSignature } from "./harness-report.js";

/**
 * Signatures recorded from real runs of the evaluation image (try-bundle.sh at the default budget,
 * SEED=<seed>): bundles/good under four seeds, the hand rewrite of it, two honest models that share
 * RMSNorm, rotary embeddings and SwiGLU (test/fixtures/copies).
 */
const recorded = JSON.parse(
  readFileSync(new URL("../test/fixtures/copies/signatures.json", import.meta.url), "utf8"),
) as Record<string, { bpb: number; behaviour: BehaviourSignature }>;
const signature = (name: string) => recorded[name]!.behaviour;
const distance = (a: string, b: string) => behaviourDistance(signature(a), signature(b))!;
const model = (name: string) => name.split("@")[0]!;
const runs = Object.keys(recorded).filter((name) => name.includes("@"));

describe("behaviour signatures of real runs", () => {
  it("each model under different seeds stays within the threshold: the seed noise", () => {
    const distances: number[] = [];
    for (const a of runs) {
      for (const b of runs) {
        if (a < b && model(a) === model(b) && model(a) !== "rewrite")
          distances.push(distance(a, b));
      }
    }
    // good under 4 seeds, the two honest models under 2: 6 + 1 + 1 pairs.
    expect(distances).toHaveLength(8);
    expect(Math.max(...distances)).toBeLessThanOrEqual(COPY_DISTANCE);
    // The noise is real (seeds do change the curve), and the threshold does not sit far above it.
    expect(Math.min(...distances)).toBeGreaterThan(0.01);
    expect(COPY_DISTANCE).toBeLessThan(1.5 * Math.max(...distances));
  });

  it("the hand rewrite of good computes what good computes, under any seed: a copy", () => {
    for (const seed of ["1337", "1"]) {
      expect(distance(`rewrite@${seed}`, `good@${seed}`)).toBeLessThan(1e-3);
      expect(recorded[`rewrite@${seed}`]!.bpb).toBe(recorded[`good@${seed}`]!.bpb);
    }
    expect(isBehaviouralCopy(distance("rewrite@1337", "good@1337"))).toBe(true);
    // Re-seeded, it is still within the noise of one model.
    expect(isBehaviouralCopy(distance("rewrite@1", "good@1337"))).toBe(true);
  });

  it("two honest models sharing RMSNorm, rotary embeddings and SwiGLU are not copies", () => {
    const honest = runs.filter((name) => name.startsWith("honest-"));
    expect(honest).toHaveLength(4);
    for (const a of honest) {
      for (const b of runs) {
        if (model(a) === model(b)) continue;
        expect(distance(a, b), `${a} vs ${b}`).toBeGreaterThan(1.5 * COPY_DISTANCE);
        expect(isBehaviouralCopy(distance(a, b))).toBe(false);
      }
    }
  });
});

describe("behaviourDistance", () => {
  const flat = (value: number, points = 64, bucket = 100): BehaviourSignature => ({
    bucket_bytes: bucket,
    losses: Array.from({ length: points }, () => value),
  });

  it("is the mean absolute difference over the shared points", () => {
    // 16 shared points, each 0.5 apart; b's last four points have no partner and do not count.
    const a = flat(1, 16, 10);
    const b = {
      bucket_bytes: 10,
      losses: flat(1.5, 20, 10).losses.map((v, i) => (i % 2 ? v : 0.5)),
    };
    expect(behaviourDistance(a, b)).toBe(0.5);
    expect(behaviourDistance(b, a)).toBe(0.5);
    expect(behaviourDistance(flat(2), flat(2))).toBe(0);
  });

  it("compares nothing it cannot: other span sizes, too few points, a null point", () => {
    expect(behaviourDistance(flat(1, 64, 100), flat(1, 64, 101))).toBeNull();
    expect(behaviourDistance(flat(1, MIN_SHARED_POINTS - 1), flat(1))).toBeNull();
    expect(behaviourDistance(flat(1, MIN_SHARED_POINTS), flat(1))).toBe(0);
    const hole = { bucket_bytes: 100, losses: [...flat(1, 20).losses, null] };
    expect(behaviourDistance(hole, flat(1))).toBeNull();
    expect(isBehaviouralCopy(null)).toBe(false);
  });

  it("counts the threshold itself as a copy", () => {
    expect(isBehaviouralCopy(COPY_DISTANCE)).toBe(true);
    expect(isBehaviouralCopy(COPY_DISTANCE + 1e-9)).toBe(false);
    expect(isBehaviouralCopy(0.3, 0.3)).toBe(true);
  });
});
