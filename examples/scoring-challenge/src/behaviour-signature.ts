/**
 * Copies known by what they compute. The scorer reports a behaviour signature with every run
 * (eval-image/harness/harness_behaviour.py): the prequential loss curve, the charged nats per
 * byte in 64 equal spans of the stream. Two runs on the same bytes (the same `stream_sha256`)
 * whose curves are within the noise of ONE model under different seeds computed the same thing:
 * the later bundle is a copy, whatever its code looks like (a hand rewrite with the same layers,
 * init order and hyperparameters has a token similarity of 0.26 to `good` and the same curve).
 *
 * The distance is the mean absolute difference of the two curves, in nats per byte. The
 * threshold, COPY_DISTANCE, sits above the seed noise measured on three models (runs of each
 * under different seeds, docs/challenges/scoring.md "Duplicates"): a copy that re-draws its
 * initialisation (another seed, a dummy draw inside build_model) stays within it, and two honest
 * models that differ in depth, width or optimiser are beyond it, shared building blocks or not.
 */
import type { BehaviourSignature } from "./harness-report.js";

/**
 * Mean absolute curve difference (nats per byte) up to which a later run is a copy: above the
 * largest seed noise measured (0.17, a noisy model on the pool's first bytes; `good`'s is
 * 0.02-0.06), below the smallest distance measured between different models (0.30).
 */
export const COPY_DISTANCE = 0.2;
/** Points two curves must share to be compared: fewer says too little about a training run. */
export const MIN_SHARED_POINTS = 16;

/**
 * The mean absolute difference of two curves over the spans both cover, in nats per byte; null
 * when they cannot be compared (spans of different sizes, too few shared points, a missing one).
 */
export function behaviourDistance(a: BehaviourSignature, b: BehaviourSignature): number | null {
  if (a.bucket_bytes !== b.bucket_bytes) return null;
  const shared = Math.min(a.losses.length, b.losses.length);
  if (shared < MIN_SHARED_POINTS) return null;
  let total = 0;
  for (let i = 0; i < shared; i++) {
    const x = a.losses[i];
    const y = b.losses[i];
    if (typeof x !== "number" || typeof y !== "number") return null;
    total += Math.abs(x - y);
  }
  return total / shared;
}

/** Whether a distance makes a copy: the threshold itself is one. */
export function isBehaviouralCopy(
  distance: number | null,
  threshold: number = COPY_DISTANCE,
): boolean {
  return distance !== null && distance <= threshold;
}
