// subtensor scales and checks weights in I32F32 fixed point (the `fixed` crate: a signed 64-bit
// integer with 32 fraction bits). Doing the same arithmetic on BigInt gives the chain's exact
// results at the rounding and saturation edges, where floating point would differ.

const FRAC = 32n;
const ONE = 1n << FRAC;
const MAX = (1n << 63n) - 1n;
const MIN = -(1n << 63n);
const U16_MAX = 65535n;

const fromInt = (n: bigint) => n << FRAC;
const saturate = (raw: bigint) => (raw > MAX ? MAX : raw < MIN ? MIN : raw);
const mul = (a: bigint, b: bigint) => saturate((a * b) >> FRAC);
// `safe_div`: zero on a zero divisor or an overflowing quotient; otherwise truncated.
const div = (a: bigint, b: bigint) => {
  if (b === 0n) return 0n;
  const q = (a << FRAC) / b;
  return q > MAX || q < MIN ? 0n : q;
};
// `round()`: half away from zero.
const round = (raw: bigint) =>
  raw >= 0n ? ((raw + (ONE >> 1n)) >> FRAC) << FRAC : -(((-raw + (ONE >> 1n)) >> FRAC) << FRAC);
const toU16 = (raw: bigint) => {
  if (raw <= 0n) return 0;
  const int = raw >> FRAC;
  return Number(int > U16_MAX ? U16_MAX : int);
};

/**
 * subtensor's `vec_u16_max_upscale_to_u16`: scales the weights so the largest becomes 65535
 * (what `set_weights` stores).
 */
export function maxUpscaleU16(values: readonly number[]): number[] {
  const vec = values.map((v) => fromInt(BigInt(v)));
  if (vec.length === 0) return [];
  const u16Max = fromInt(U16_MAX);
  let max = vec[0] as bigint;
  for (const v of vec) if (v > max) max = v;
  if (max === 0n) return vec.map((e) => toU16(mul(e, u16Max)));
  if (max > fromInt(32768n)) {
    const factor = div(u16Max, max);
    return vec.map((e) => toU16(round(mul(e, factor))));
  }
  return vec.map((e) => toU16(round(div(mul(e, u16Max), max))));
}

/**
 * subtensor's `check_vec_max_limited`: true when no weight, normalised to sum 1, is above
 * `maxLimit / 65535`.
 */
export function isMaxLimited(values: readonly number[], maxLimit: number): boolean {
  const limit = div(fromInt(BigInt(maxLimit)), fromInt(U16_MAX));
  const vec = values.map((v) => fromInt(BigInt(v)));
  let sum = 0n;
  for (const v of vec) sum += v;
  const normalised = sum === 0n ? vec : vec.map((v) => div(v, sum));
  for (const v of normalised) if (v > limit) return false;
  return true;
}
