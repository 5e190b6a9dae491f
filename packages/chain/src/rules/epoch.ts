// Spec 393's block-number epoch model (pallets/subtensor/src/subnets/weights.rs
// `get_epoch_index`, coinbase/run_coinbase.rs `should_run_epoch` / `blocks_until_next_epoch`,
// tag v3.3.13-393). Later runtimes (v3.4.8-423 on) keep a stateful SubnetEpochIndex instead; the
// metadata served here is spec 393, so this is the model its clients compute with.

/** `get_epoch_index`: `(block + netuid + 1) / (tempo + 1)`. */
export function epochIndex(netuid: number, tempo: number, block: number): number {
  return Math.floor((block + netuid + 1) / (tempo + 1));
}

/**
 * `blocks_until_next_epoch`: 0 at the block whose epoch runs (the last block of an epoch index:
 * the next block starts the next one). A tempo of 0 never runs (u64::MAX there).
 */
export function blocksUntilNextEpoch(netuid: number, tempo: number, block: number): number {
  if (tempo === 0) return Number.POSITIVE_INFINITY;
  return tempo - ((block + netuid + 1) % (tempo + 1));
}

/** `should_run_epoch`. */
export function shouldRunEpoch(netuid: number, tempo: number, block: number): boolean {
  return blocksUntilNextEpoch(netuid, tempo, block) === 0;
}

/** `get_first_block_of_epoch`: `epoch · (tempo + 1) - (netuid + 1)`, saturating at 0. */
export function firstBlockOfEpoch(netuid: number, tempo: number, epoch: number): number {
  return Math.max(0, epoch * (tempo + 1) - (netuid + 1));
}
