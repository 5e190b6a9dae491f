// The stateful epoch model of subtensor v3.4.8-423 on (finney spec 424's metadata): an epoch
// counter, `SubnetEpochIndex(netuid)`, that `run_coinbase` advances when `should_run_epoch` holds
// (coinbase/run_coinbase.rs `drain_pending`, `should_run_epoch`), and the index commits and
// reveals are keyed by (subnets/weights.rs `current_epoch_with_lookahead`,
// coinbase/reveal_commits.rs). The schedule is `LastEpochBlock + tempo` (period `tempo`, not
// `tempo + 1`), or earlier at an owner-triggered `PendingEpochAt`; a skipped epoch (inconsistent
// inputs) still advances the counter, a deferred one (the per-block cap) does not.
//
// The prediction below is bittensor-drand 2.0's (`src/epoch_schedule.rs`,
// opentensor/bittensor-drand@d7baf9765f39d6c9c876777efe14a4bd11dbaf66): it simulates
// `run_coinbase` block by block and, like it, does not model the per-block cap's deferrals
// (they depend on every other subnet due in the same block).

/** `MAX_TEMPO`: past this many blocks without a successful step an epoch runs every block. */
export const MAX_TEMPO = 50_400;

/** The counter model's state of one subnet, as stored after block `block` ran. */
export interface CounterEpochState {
  /** `SubnetEpochIndex(netuid)`. */
  epochIndex: number;
  /** `LastEpochBlock(netuid)`: the block whose `run_coinbase` last advanced the counter. */
  lastEpochBlock: number;
  /** `PendingEpochAt(netuid)`: an epoch due at this block (0: none). */
  pendingEpochAt: number;
  /** `BlocksSinceLastStep(netuid)`. */
  blocksSinceLastStep: number;
  /** `Tempo(netuid)`: 0 never runs an epoch. */
  tempo: number;
  /** The block this state is as of (after it ran). */
  block: number;
}

/** `should_run_epoch(netuid, block)` against `state`. */
export function counterShouldRunEpoch(state: CounterEpochState, block: number): boolean {
  if (state.tempo === 0) return false;
  if (state.pendingEpochAt > 0 && block >= state.pendingEpochAt) return true;
  if (state.blocksSinceLastStep > MAX_TEMPO) return true;
  return Math.max(0, block - state.lastEpochBlock) >= state.tempo;
}

/**
 * `current_epoch_with_lookahead` at `block` from the state the block starts with: the counter,
 * plus one when an epoch is due in `block`. It is the epoch `reveal_crv3_commits` reveals for
 * (it runs before `run_coinbase`), and the key of a commit included in `block`.
 */
export function counterEpochAt(state: CounterEpochState, block: number): number {
  return state.epochIndex + (counterShouldRunEpoch(state, block) ? 1 : 0);
}

/** The state after `run_coinbase` ran in `block` (no deferral). */
export function counterRunBlock(state: CounterEpochState, block: number): CounterEpochState {
  const next = { ...state, blocksSinceLastStep: state.blocksSinceLastStep + 1, block };
  if (!counterShouldRunEpoch(next, block)) return next;
  return {
    ...next,
    lastEpochBlock: block,
    pendingEpochAt: 0,
    epochIndex: state.epochIndex + 1,
    blocksSinceLastStep: 0,
  };
}

/** The state after every block from `state.block + 1` to `block` ran. */
export function counterAdvanceTo(state: CounterEpochState, block: number): CounterEpochState {
  let s = state;
  for (let b = state.block + 1; b <= block; b++) s = counterRunBlock(s, b);
  return s;
}

/** The most blocks a prediction simulates: `(period + 1) · MAX_TEMPO`, as bittensor-drand bounds it. */
export function maxSimulationBlocks(revealPeriodEpochs: number): number {
  return (revealPeriodEpochs + 1) * MAX_TEMPO;
}

/**
 * The first block after `state.block` whose lookahead epoch is `epoch` or later (commits included
 * there are stored under it; reveals there reveal `epoch - RevealPeriodEpochs`). Undefined for a
 * tempo of 0 or past the simulation bound.
 */
export function counterFirstBlockOfEpoch(
  state: CounterEpochState,
  epoch: number,
  bound = maxSimulationBlocks(1),
): number | undefined {
  if (state.tempo === 0) return undefined;
  let s = state;
  for (let b = state.block + 1; b <= state.block + 1 + bound; b++) {
    if (counterEpochAt(s, b) >= epoch) return b;
    s = counterRunBlock(s, b);
  }
  return undefined;
}

/**
 * bittensor-drand 2.0 `predict_first_reveal_block`: the first block at which the chain reveals a
 * commit included in the block after `state.block` (its epoch `counterEpochAt(state, block + 1)`,
 * revealed when the lookahead epoch equals it plus `revealPeriodEpochs`). Throws RangeError for a
 * tempo of 0 (the subnet never runs an epoch) or past the simulation bound.
 */
export function predictFirstRevealBlock(
  state: CounterEpochState,
  revealPeriodEpochs: number,
): number {
  if (state.tempo === 0) throw new RangeError("tempo is zero; the subnet runs no epochs");
  const included = state.block + 1;
  const target = counterEpochAt(state, included) + revealPeriodEpochs;
  let s = state;
  for (let b = included; b <= included + maxSimulationBlocks(revealPeriodEpochs); b++) {
    if (counterEpochAt(s, b) === target) return b;
    s = counterRunBlock(s, b);
  }
  throw new RangeError("the reveal block is past the simulation bound");
}
