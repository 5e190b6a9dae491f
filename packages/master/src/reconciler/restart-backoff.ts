/**
 * How long to wait before the next (re)start of a challenge that failed `failures` times in a
 * row: nothing the first time (a killed challenge is back at the next pass), then `base`,
 * doubling up to `max` (seconds). A challenge that stays up and ready for
 * {@link STABLE_SECONDS} starts from nothing again.
 */
export function restartDelaySeconds(failures: number, base: number, max: number): number {
  if (failures <= 0) return 0;
  return Math.min(max, base * 2 ** Math.min(failures - 1, 30));
}

/** Up and ready this long after a (re)start, a challenge's failures are forgotten. */
export const STABLE_SECONDS = 60;
