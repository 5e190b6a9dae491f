import { BURN_UID } from "@platform/chain";
import type { WeightsSource } from "@platform/core";
import { toU16Weights } from "./chain-weights.js";

// The uid that receives weight nobody earned is the chain's (the validator sends to it too).
export { BURN_UID };

/**
 * What happens to the emission share of a challenge that cannot pay its own miners (its
 * collection failed, or it named no usable hotkey): `burn` sends it to {@link BURN_UID};
 * `redistribute` shares it among the challenges that answered (the anchor's behaviour).
 */
export type FailurePolicy = "burn" | "redistribute";

/** One challenge's contribution to an aggregation: its emission and its reply, or why it has none. */
export interface ChallengeWeightsInput {
  slug: string;
  emission_percent: number;
  outcome:
    | { ok: true; epoch: number | null; weights: Readonly<Record<string, unknown>> }
    | { ok: false; error: string };
}

/** Options of {@link aggregateWeights}. */
export interface AggregateOptions {
  /** hotkey -> uid from the metagraph; null when none is available (the uid vector then burns). */
  uids: ReadonlyMap<string, number> | null;
  failurePolicy: FailurePolicy;
}

/** What cleaning did to one challenge's reply, for operators (not part of the public snapshot). */
export interface SourceCleaning {
  slug: string;
  /** Entries dropped because the value was not a finite number > 0. */
  dropped_invalid: number;
  /** Entries dropped because the metagraph does not know the hotkey. */
  dropped_unknown: number;
}

/** The aggregated vector: uids and weights by ascending uid, the same as chain u16, per hotkey, with sources. */
export interface AggregatedWeights {
  uids: number[];
  weights: number[];
  weights_u16: number[];
  hotkeys: Record<string, number>;
  burned: boolean;
  sources: WeightsSource[];
  cleaning: SourceCleaning[];
}

interface Cleaned {
  input: ChallengeWeightsInput;
  /** hotkey -> weight, normalised to sum 1; empty when the challenge pays nobody. */
  weights: Map<string, number>;
  status: WeightsSource["status"];
  error: string | null;
  epoch: number | null;
  cleaning: SourceCleaning;
}

function emissionOf(input: ChallengeWeightsInput): number {
  const value = input.emission_percent;
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}

function clean(input: ChallengeWeightsInput, uids: ReadonlyMap<string, number> | null): Cleaned {
  const cleaning: SourceCleaning = { slug: input.slug, dropped_invalid: 0, dropped_unknown: 0 };
  if (!input.outcome.ok) {
    return {
      input,
      weights: new Map(),
      status: "failed",
      error: input.outcome.error,
      epoch: null,
      cleaning,
    };
  }
  const kept = new Map<string, number>();
  let max = 0;
  // Object.entries gives own keys only, so a hotkey named "__proto__" is just a string here.
  for (const [hotkey, value] of Object.entries(input.outcome.weights)) {
    if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
      cleaning.dropped_invalid++;
      continue;
    }
    // Unknown hotkeys leave before normalising, so a challenge's share stays with its own
    // registered miners instead of leaking to the other challenges.
    if (uids && !uids.has(hotkey)) {
      cleaning.dropped_unknown++;
      continue;
    }
    kept.set(hotkey, value);
    if (value > max) max = value;
  }
  // Scale by the largest value first: two finite values near Number.MAX_VALUE would sum to Infinity.
  let total = 0;
  for (const [hotkey, value] of kept) {
    const scaled = value / max;
    kept.set(hotkey, scaled);
    total += scaled;
  }
  for (const [hotkey, value] of kept) kept.set(hotkey, value / total);
  return {
    input,
    weights: kept,
    status: kept.size > 0 ? "ok" : "empty",
    error: null,
    epoch: input.outcome.epoch,
    cleaning,
  };
}

/**
 * Combine every challenge's per-hotkey weights into one vector, by emission share.
 *
 * 1. Drop values that are not finite numbers > 0, and hotkeys the metagraph does not know;
 *    normalise each challenge's remaining weights to 1.
 * 2. Shares: emission_percent normalised over the challenges that count (emission > 0; with
 *    `redistribute`, only those that paid somebody).
 * 3. Sum share x weight per hotkey, then per uid. With `burn`, the share of a challenge that
 *    failed or named nobody goes to uid 0. If nothing is left, everything burns (`burned: true`).
 * 4. With no metagraph (`uids: null`) the per-hotkey weights are still computed, but no uid
 *    vector can be built: it burns.
 */
export function aggregateWeights(
  inputs: readonly ChallengeWeightsInput[],
  options: AggregateOptions,
): AggregatedWeights {
  const cleaned = inputs.map((input) => clean(input, options.uids));
  const counts = (c: Cleaned) =>
    emissionOf(c.input) > 0 && (options.failurePolicy === "burn" || c.status === "ok");
  const emissionTotal = cleaned.filter(counts).reduce((sum, c) => sum + emissionOf(c.input), 0);

  const shares = new Map<Cleaned, number>();
  const byHotkey = new Map<string, number>();
  let burnShare = 0;
  for (const c of cleaned) {
    if (!counts(c) || emissionTotal === 0) continue;
    const share = emissionOf(c.input) / emissionTotal;
    if (c.status !== "ok") {
      burnShare += share;
      continue;
    }
    shares.set(c, share);
    for (const [hotkey, weight] of c.weights)
      byHotkey.set(hotkey, (byHotkey.get(hotkey) ?? 0) + share * weight);
  }

  const sources: WeightsSource[] = cleaned.map((c) => ({
    slug: c.input.slug,
    emission_percent: emissionOf(c.input),
    status: c.status,
    epoch: c.epoch,
    hotkeys: c.weights.size,
    share: shares.get(c) ?? 0,
    error: c.error,
  }));
  const hotkeys = Object.fromEntries(
    [...byHotkey].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
  const cleaning = cleaned.map((c) => c.cleaning);

  const byUid = new Map<number, number>();
  if (options.uids) {
    for (const [hotkey, weight] of byHotkey) {
      const uid = options.uids.get(hotkey)!;
      byUid.set(uid, (byUid.get(uid) ?? 0) + weight);
    }
  }
  const paid = [...byUid.values()].reduce((sum, w) => sum + w, 0);
  if (!(paid > 0)) {
    return {
      uids: [BURN_UID],
      weights: [1],
      weights_u16: [65_535],
      hotkeys,
      burned: true,
      sources,
      cleaning,
    };
  }
  if (burnShare > 0) byUid.set(BURN_UID, (byUid.get(BURN_UID) ?? 0) + burnShare);
  const entries = [...byUid].sort(([a], [b]) => a - b);
  const total = entries.reduce((sum, [, w]) => sum + w, 0);
  const weights = entries.map(([, w]) => Math.min(1, w / total));
  return {
    uids: entries.map(([uid]) => uid),
    weights,
    weights_u16: toU16Weights(weights),
    hotkeys,
    burned: false,
    sources,
    cleaning,
  };
}
