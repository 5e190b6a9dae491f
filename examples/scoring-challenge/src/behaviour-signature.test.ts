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
 * SEED=<seed>) on two streams, the pool's first bytes ("pinned") and one epoch's draw of windows
 * ("epoch", what the service scores): bundles/good under three or four seeds, the hand rewrite of
 * it, two honest models that share RMSNorm, rotary embeddings and SwiGLU under two each
 * (test/fixtures/copies).
 */
interface RecordedRun {
  stream_sha256: string;
  bpb: number;
  behaviour: BehaviourSignature;
}
const recorded = JSON.parse(
  readFileSync(new URL("../test/fixtures/copies/signatures.json", import.meta.url), "utf8"),
) as Record<string, RecordedRun>;
/** `epoch/honest-deep@1` is model honest-deep. */
const model = (name: string) => name.split("/")[1]!.split("@")[0]!;

describe.each(["pinned", "epoch"])("behaviour signatures of real runs, %s stream", (stream) => {
  const runs = Object.keys(recorded).filter((name) => name.startsWith(`${stream}/`));
  const signature = (name: string) => recorded[name]!.behaviour;
  const distance = (a: string, b: string) => behaviourDistance(signature(a), signature(b))!;

  it("are all on one stream", () => {
    expect(new Set(runs.map((name) => recorded[name]!.stream_sha256)).size).toBe(1);
  });

  it("each model under different seeds stays within the threshold: the seed noise", () => {
    const distances: number[] = [];
    for (const a of runs) {
      for (const b of runs) {
        if (a < b && model(a) === model(b) && model(a) !== "rewrite")
          distances.push(distance(a, b));
      }
    }
    // good under 3 or 4 seeds, the two honest models under 2.
    expect(distances.length).toBeGreaterThanOrEqual(5);
    expect(Math.max(...distances)).toBeLessThanOrEqual(COPY_DISTANCE);
    // The noise is real: seeds do change the curve.
    expect(Math.min(...distances)).toBeGreaterThan(0.01);
  });

  it("the hand rewrite of good computes what good computes, under any seed: a copy", () => {
    const rewrites = runs.filter((name) => model(name) === "rewrite");
    expect(rewrites.length).toBeGreaterThanOrEqual(1);
    for (const rewrite of rewrites) {
      const good = rewrite.replace("rewrite@", "good@");
      expect(distance(rewrite, good)).toBeLessThan(1e-3);
      expect(recorded[rewrite]!.bpb).toBe(recorded[good]!.bpb);
      expect(isBehaviouralCopy(distance(rewrite, good))).toBe(true);
      // Against good under another seed, it is still within the noise of one model.
      for (const other of runs.filter((name) => model(name) === "good" && name !== good)) {
        expect(isBehaviouralCopy(distance(rewrite, other))).toBe(true);
      }
    }
  });

  it("two honest models sharing RMSNorm, rotary embeddings and SwiGLU are not copies", () => {
    const honest = runs.filter((name) => model(name).startsWith("honest-"));
    expect(honest).toHaveLength(4);
    for (const a of honest) {
      for (const b of runs) {
        if (model(a) === model(b)) continue;
        expect(distance(a, b), `${a} vs ${b}`).toBeGreaterThan(1.25 * COPY_DISTANCE);
        expect(isBehaviouralCopy(distance(a, b))).toBe(false);
      }
    }
  });
});

describe("the threshold", () => {
  it("does not sit far above the largest seed noise measured", () => {
    let noise = 0;
    const names = Object.keys(recorded).filter((name) => name.includes("/"));
    for (const a of names) {
      for (const b of names) {
        const sameStream = a.split("/")[0] === b.split("/")[0];
        if (a < b && sameStream && model(a) === model(b) && model(a) !== "rewrite") {
          noise = Math.max(
            noise,
            behaviourDistance(recorded[a]!.behaviour, recorded[b]!.behaviour)!,
          );
        }
      }
    }
    expect(noise).toBeLessThanOrEqual(COPY_DISTANCE);
    expect(COPY_DISTANCE).toBeLessThan(1.5 * noise);
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
