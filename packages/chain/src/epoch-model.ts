import type { ApiPromise } from "@polkadot/api";
import type { Codec } from "@polkadot/types/types";
import type { BlockRef } from "./chain-client.js";
import {
  type CounterEpochState,
  counterAdvanceTo,
  counterEpochAt,
  counterFirstBlockOfEpoch,
  counterShouldRunEpoch,
  predictFirstRevealBlock,
} from "./rules/counter-epoch.js";
import { epochIndex, firstBlockOfEpoch, shouldRunEpoch } from "./rules/epoch.js";
import { revealRound, revealRoundV2 } from "./weights-tlock-payload.js";

// The runtime decides how epochs are numbered. Every read of a subnet's schedule decorates the
// api at the block it reads (`api.at`), i.e. with the metadata of the runtime that block ran:
// `SubtensorModule.SubnetEpochIndex` in it means the counter model (v3.4.8-423 on), its absence
// the spec-393 block-number formula. A runtime upgrade is therefore followed block by block, and
// a commit included before an upgrade is still found under the key its own block gave it.

/** Which epoch model a runtime runs. */
export type EpochModelKind = "block-number" | "counter";

/** Spec version from which `check_validator_permit` and the min-stake check accept the owner. */
export const OWNER_EXEMPTION_SPEC = 401;

/** A subnet's epoch schedule read at one block, in the model that block's runtime runs. */
export type EpochSchedule =
  | {
      model: "block-number";
      netuid: number;
      specVersion: number;
      /** The block it was read at. */
      block: number;
      tempo: number;
    }
  | {
      model: "counter";
      netuid: number;
      specVersion: number;
      block: number;
      tempo: number;
      state: CounterEpochState;
    };

/** What a runtime offers the validator, read from its version and metadata. */
export interface RuntimeFeatures {
  specVersion: number;
  epochModel: EpochModelKind;
  /** The subnet owner's hotkey needs no validator permit nor minimum stake (spec 401 on). */
  ownerExempt: boolean;
}

type Decorated = Awaited<ReturnType<ApiPromise["at"]>>;

/** The features of the runtime an api (or an api decorated at a block) was built for. */
export function runtimeFeatures(api: ApiPromise | Decorated): RuntimeFeatures {
  const specVersion = api.runtimeVersion.specVersion.toNumber();
  const module = api.query["subtensorModule"];
  return {
    specVersion,
    epochModel: module?.["subnetEpochIndex"] ? "counter" : "block-number",
    ownerExempt: specVersion >= OWNER_EXEMPTION_SPEC && module?.["subnetOwnerHotkey"] !== undefined,
  };
}

const read = async (at: Decorated, item: string, ...args: unknown[]): Promise<number> => {
  const entry = at.query["subtensorModule"]?.[item];
  if (!entry) throw new Error(`the chain's runtime has no SubtensorModule.${item}`);
  return Number(((await entry(...args)) as Codec).toString());
};

/** Reads `netuid`'s schedule at block `at`, in the model of the runtime that block ran. */
export async function readEpochSchedule(
  api: ApiPromise,
  at: BlockRef,
  netuid: number,
): Promise<EpochSchedule> {
  const decorated = await api.at(at.hash);
  const { specVersion, epochModel } = runtimeFeatures(decorated);
  const tempo = await read(decorated, "tempo", netuid);
  if (epochModel === "block-number") {
    return { model: "block-number", netuid, specVersion, block: at.number, tempo };
  }
  const [epoch, last, pending, sinceStep] = await Promise.all([
    read(decorated, "subnetEpochIndex", netuid),
    read(decorated, "lastEpochBlock", netuid),
    read(decorated, "pendingEpochAt", netuid),
    read(decorated, "blocksSinceLastStep", netuid),
  ]);
  const state: CounterEpochState = {
    epochIndex: epoch,
    lastEpochBlock: last,
    pendingEpochAt: pending,
    blocksSinceLastStep: sinceStep,
    tempo,
    block: at.number,
  };
  return { model: "counter", netuid, specVersion, block: at.number, tempo, state };
}

/** The schedule as it will stand after `block` (>= its own block), with nothing else changed. */
export function advanceSchedule(schedule: EpochSchedule, block: number): EpochSchedule {
  if (block <= schedule.block) return schedule;
  if (schedule.model === "block-number") return { ...schedule, block };
  return { ...schedule, block, state: counterAdvanceTo(schedule.state, block) };
}

/**
 * The epoch the chain reveals for at the schedule's own block (the one a commit expires or is
 * revealed by): the formula's index of the block, or the counter as stored after it.
 */
export function epochOfBlock(schedule: EpochSchedule): number {
  if (schedule.model === "block-number") {
    return epochIndex(schedule.netuid, schedule.tempo, schedule.block);
  }
  return schedule.state.epochIndex;
}

/**
 * The epoch block `at.block`'s reveal step worked from (`current_epoch_with_lookahead` as the
 * block started, before its `run_coinbase`), given the schedule after its parent (`before`). On
 * the counter that is the lookahead from the parent's state, not the counter stored after the
 * block: an epoch due in the block but deferred (`EpochDeferred`) leaves the stored counter one
 * behind the epoch the block revealed for. On the formula (and in the block that migrated to the
 * counter, whose parent has none), the block's own epoch.
 */
export function revealEpochOfBlock(before: EpochSchedule, at: EpochSchedule): number {
  if (at.model === "counter" && before.model === "counter") {
    return counterEpochAt(before.state, at.block);
  }
  return epochOfBlock(at);
}

/**
 * The `TimelockedWeightCommits` key of a commit included in `block` (after the schedule's block,
 * or the schedule's own block read after it ran): the formula's epoch of the block, plus one in
 * the block that runs the epoch; or the counter with its lookahead.
 */
export function commitEpochIn(schedule: EpochSchedule, block: number): number {
  if (schedule.model === "block-number") {
    const { netuid, tempo } = schedule;
    return epochIndex(netuid, tempo, block) + (shouldRunEpoch(netuid, tempo, block) ? 1 : 0);
  }
  if (block <= schedule.block) {
    // Read after the block ran: its coinbase already moved the counter; the extrinsic saw the
    // counter then and the lookahead after it.
    const s = schedule.state;
    return s.epochIndex + (counterShouldRunEpoch(s, block) ? 1 : 0);
  }
  return counterEpochAt(counterAdvanceTo(schedule.state, block - 1), block);
}

/**
 * The first block after the schedule's whose commits are stored under `epoch` or later (what
 * "one commit per epoch" waits for). Undefined when the subnet runs no epochs.
 */
export function firstCommitBlockOfEpoch(
  schedule: EpochSchedule,
  epoch: number,
): number | undefined {
  if (schedule.model === "block-number") {
    if (schedule.tempo === 0) return undefined;
    return Math.max(0, firstBlockOfEpoch(schedule.netuid, schedule.tempo, epoch) - 1);
  }
  return counterFirstBlockOfEpoch(schedule.state, epoch);
}

/**
 * The block the reveal round is aimed from (3 blocks before the pulse it locks to) for a commit
 * built at the schedule's block: bittensor-drand 1.2's first block of `epoch(best) + period` on
 * the formula, 2.0's predicted first reveal block on the counter.
 */
export function plannedRevealBlock(schedule: EpochSchedule, revealPeriodEpochs: number): number {
  if (schedule.model === "block-number") {
    const { netuid, tempo, block } = schedule;
    return firstBlockOfEpoch(netuid, tempo, epochIndex(netuid, tempo, block) + revealPeriodEpochs);
  }
  return predictFirstRevealBlock(schedule.state, revealPeriodEpochs);
}

/** How the reveal round is computed from a schedule (see {@link revealRoundFor}). */
export interface RoundClock {
  revealPeriodEpochs: number;
  blockTimeSeconds: number;
  nowSeconds: number;
  genesisTime: number;
  period: number;
}

/**
 * The drand round a commit built at the schedule's block is locked to: bittensor-drand 1.2's
 * `generate_commit` formula on the block-number model, 2.0's `generate_commit_v2` on the counter.
 */
export function revealRoundFor(schedule: EpochSchedule, clock: RoundClock): number {
  if (schedule.model === "block-number") {
    return revealRound({
      currentBlock: schedule.block,
      netuid: schedule.netuid,
      tempo: schedule.tempo,
      ...clock,
    });
  }
  return revealRoundV2({ state: schedule.state, ...clock });
}
