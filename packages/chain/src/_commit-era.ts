/** A mortal era by its birth block and period (a power of two from 4). */
export interface EraChoice {
  birth: number;
  period: number;
}

/** The shortest mortal era the runtime accepts (`Era::mortal` clamps to 4). */
export const MIN_ERA_PERIOD = 4;

const nextPowerOfTwo = (n: number) => 2 ** Math.ceil(Math.log2(Math.max(1, n)));

/**
 * The mortal era to sign an attempt with, born at or before `finalized` (a block whose hash the
 * signer knows and no fork can replace): `eraPeriod` blocks from `finalized`, or, for a commit,
 * dead by `deathBound`, the first block whose commits the chain stores under the next epoch.
 *
 * Why a commit must die there: its reveal round is computed for the epoch it is planned into. A
 * commit that slips into the block running the epoch (or later) is stored one epoch later while
 * its round still points at the earlier reveal epoch, so its weights could be decrypted up to an
 * epoch before the chain reveals them (weight copying). Dead instead, it is planned again for the
 * next epoch. An era may be born in the past: `birth = deathBound - period`, the smallest power of
 * two that reaches back to a finalized block, so the window is every block up to the bound.
 */
export function chooseEra(options: {
  finalized: number;
  eraPeriod: number;
  deathBound?: number | undefined;
}): EraChoice {
  const { finalized, eraPeriod, deathBound } = options;
  if (deathBound === undefined || deathBound - finalized >= eraPeriod) {
    return { birth: finalized, period: eraPeriod };
  }
  const period = Math.max(MIN_ERA_PERIOD, nextPowerOfTwo(deathBound - finalized));
  // Near genesis there is no block that far back: the era cannot end at the bound; the earliest
  // death (block 0's era) is the closest (the lookahead check in the sender reports the rest).
  return { birth: Math.max(0, deathBound - period), period };
}
