/** The chain's fixed-point unit: a u16 weight of 65535 means 1.0. */
export const U16_MAX = 65_535;

/**
 * Convert non-negative weights to chain u16 values that sum to exactly 65535 (when any weight
 * is positive), by largest remainder: each gets floor(w x 65535 / sum), and the units left over
 * go to the largest fractional parts, ties to the lower index. Plain rounding could sum to
 * 65534 or 65536, and truncation alone always loses units.
 * @example toU16Weights([0.5, 0.5]) // [32768, 32767]
 */
export function toU16Weights(weights: readonly number[]): number[] {
  for (const w of weights) {
    if (!Number.isFinite(w) || w < 0)
      throw new RangeError(`weights must be finite and >= 0, got ${w}`);
  }
  const sum = weights.reduce((total, w) => total + w, 0);
  if (sum === 0) return weights.map(() => 0);
  const exact = weights.map((w) => (w / sum) * U16_MAX);
  const units = exact.map((x) => Math.min(U16_MAX, Math.floor(x)));
  let left = U16_MAX - units.reduce((total, u) => total + u, 0);
  const order = exact
    .map((x, index) => ({ index, remainder: x - Math.floor(x) }))
    .filter(({ index }) => weights[index]! > 0)
    .sort((a, b) => b.remainder - a.remainder || a.index - b.index);
  // `left` is below the number of positive weights, up to float error; the loop tolerates both.
  for (let i = 0; left > 0 && order.length > 0; i = (i + 1) % order.length) {
    units[order[i]!.index]! += 1;
    left--;
  }
  return units;
}
