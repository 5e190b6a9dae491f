import { epochIndex, shouldRunEpoch as formulaShouldRun } from "../rules/epoch.js";
import type { ChainState } from "./_chain-state.js";

// The two epoch models the local chain runs, chosen by the runtime it serves.
//
// Spec 393: the block-number formula (rules/epoch.ts): epoch `(block + netuid + 1) / (tempo + 1)`.
//
// Spec 423 on (opentensor/subtensor v3.4.8-423, read at v3.4.9-424): a stateful counter.
// `coinbase/run_coinbase.rs` `should_run_epoch`: an epoch is due when `PendingEpochAt` is set and
// reached, or `BlocksSinceLastStep > MAX_TEMPO`, or `block - LastEpochBlock >= tempo` (period
// `tempo`, not `tempo + 1`). `drain_pending` (in `run_coinbase`, after `reveal_crv3_commits` in
// the block step): for each subnet, BlocksSinceLastStep += 1; a due epoch beyond
// `MaxEpochsPerBlock` this block is deferred (`PendingEpochAt = block + 1`, `EpochDeferred`);
// otherwise it runs, or is skipped when its input state is inconsistent (`EpochSkipped`), and in
// both cases `LastEpochBlock = block`, `PendingEpochAt = 0`, `SubnetEpochIndex += 1`.
// `subnets/weights.rs` `current_epoch_with_lookahead`: the counter, plus one when an epoch is due
// this block; commits are keyed by it and reveals look back `RevealPeriodEpochs` from it.

/** `MAX_TEMPO`: past this many blocks without a step an epoch is due whatever the schedule. */
export const MAX_TEMPO = 50_400;

/** An event the epoch schedule deposits (block initialization). */
export type EpochEvent =
  | { name: "EpochDeferred"; netuid: number; fromBlock: number; toBlock: number }
  | { name: "EpochSkipped"; netuid: number; block: number };

/** Dev controls over the next due epochs: each call consumes one. */
export interface EpochFaults {
  /** True when the epoch due on `netuid` this block is to be deferred one block. */
  takeDeferral(netuid: number): boolean;
  /** True when the epoch due on `netuid` this block is to be skipped (inconsistent input). */
  takeSkip(netuid: number): boolean;
}

/** `should_run_epoch` of the counter model at `block`. */
export function counterShouldRun(state: ChainState, netuid: number, block: number): boolean {
  const tempo = state.tempo(netuid);
  if (tempo === 0) return false;
  const pending = state.pendingEpochAt(netuid);
  if (pending > 0 && block >= pending) return true;
  if (state.blocksSinceLastStep(netuid) > MAX_TEMPO) return true;
  return block - state.lastEpochBlock(netuid) >= tempo;
}

/**
 * The epoch a commit made in block `block` is stored under (after the block's initialization):
 * `current_epoch_with_lookahead` on a counter runtime, and on spec 393 the formula's epoch plus
 * one in the block that runs the epoch.
 */
export function commitEpoch(state: ChainState, netuid: number, block: number): number {
  if (state.runtime.counterEpochs) {
    return state.epochCounter(netuid) + (counterShouldRun(state, netuid, block) ? 1 : 0);
  }
  const tempo = state.tempo(netuid);
  return epochIndex(netuid, tempo, block) + (formulaShouldRun(netuid, tempo, block) ? 1 : 0);
}

/**
 * The current epoch the reveal step of block `block` works from (before that block's epochs
 * run): `current_epoch_with_lookahead` on a counter runtime, `get_epoch_index` on spec 393.
 */
export function revealCurrentEpoch(state: ChainState, netuid: number, block: number): number {
  if (state.runtime.counterEpochs) {
    return state.epochCounter(netuid) + (counterShouldRun(state, netuid, block) ? 1 : 0);
  }
  return epochIndex(netuid, state.tempo(netuid), block);
}

/**
 * `drain_pending`'s schedule at block `block` on a counter runtime (the emission it drains is
 * not modelled): advances every due subnet's counter, defers past the per-block cap and skips
 * where `faults` say so. Returns the events. Does nothing on spec 393.
 */
export function runEpochs(state: ChainState, block: number, faults: EpochFaults): EpochEvent[] {
  if (!state.runtime.counterEpochs) return [];
  const events: EpochEvent[] = [];
  const cap = state.maxEpochsPerBlock();
  let ran = 0;
  for (const netuid of storageOrder(state.subnets())) {
    if (netuid === 0) continue;
    state.setEpochItem("BlocksSinceLastStep", netuid, state.blocksSinceLastStep(netuid) + 1);
    if (!counterShouldRun(state, netuid, block)) continue;
    if (ran >= cap || faults.takeDeferral(netuid)) {
      state.setEpochItem("PendingEpochAt", netuid, block + 1);
      events.push({ name: "EpochDeferred", netuid, fromBlock: block, toBlock: block + 1 });
      continue;
    }
    if (faults.takeSkip(netuid)) {
      events.push({ name: "EpochSkipped", netuid, block });
    } else {
      state.setEpochItem("BlocksSinceLastStep", netuid, 0);
      ran += 1;
    }
    // The slot is consumed whether the epoch ran or was skipped.
    state.setEpochItem("LastEpochBlock", netuid, block);
    state.setEpochItem("PendingEpochAt", netuid, 0);
    state.setEpochItem("SubnetEpochIndex", netuid, state.epochCounter(netuid) + 1);
  }
  return events;
}

// `get_all_subnet_netuids` iterates `NetworksAdded`, an Identity-hashed u16 map: in the order of
// the little-endian key bytes (netuid 256 before 1), which decides who is deferred past the cap.
function storageOrder(netuids: number[]): number[] {
  return [...netuids].sort((a, b) => (a & 0xff) - (b & 0xff) || (a >> 8) - (b >> 8));
}

/**
 * `migrate_dynamic_tempo` (the upgrade to the counter model) at block `block`, for every subnet
 * with a tempo: `LastEpochBlock` so the first counter epoch fires where the formula's would, and
 * `SubnetEpochIndex` seeded with the formula's epoch, so commits stored under formula epochs
 * keep their keys.
 */
export function migrateToCounter(state: ChainState, block: number): void {
  for (const netuid of state.subnets()) {
    const tempo = state.tempo(netuid);
    if (tempo === 0) continue;
    const adjusted = block + netuid + 1;
    const blocksUntilNext = tempo - (adjusted % (tempo + 1));
    const offset = tempo - blocksUntilNext;
    state.setEpochItem("LastEpochBlock", netuid, Math.max(0, block - offset));
    state.setEpochItem("SubnetEpochIndex", netuid, Math.floor(adjusted / (tempo + 1)));
  }
}
