/**
 * Clean a weights record the way the master will read it: entries whose weight is not a finite
 * number above zero are dropped, the rest are scaled to sum to 1. An empty result is `{}`.
 * @example normalizeWeights({ a: 3, b: 1, c: -2 }) // { a: 0.75, b: 0.25 }
 */
export function normalizeWeights(
  weights: Readonly<Record<string, number>>,
): Record<string, number> {
  const kept = Object.entries(weights).filter(
    ([, weight]) => typeof weight === "number" && Number.isFinite(weight) && weight > 0,
  );
  if (kept.length === 0) return {};
  // Scaled by the largest first: a sum of huge finite weights could overflow to Infinity.
  const max = Math.max(...kept.map(([, weight]) => weight));
  const scaled = kept.map(([hotkey, weight]) => [hotkey, weight / max] as const);
  const total = scaled.reduce((sum, [, weight]) => sum + weight, 0);
  // fromEntries defines own properties, so a hotkey named "__proto__" stays a plain key.
  return Object.fromEntries(scaled.map(([hotkey, weight]) => [hotkey, weight / total]));
}
