import type { Logger } from "@platform/core";
import { encodeAddress } from "@polkadot/util-crypto";
import {
  checkRateLimit,
  internalSetWeights,
  netuidStorageIndex,
} from "../rules/set-weights-checks.js";
import { TimelockError, timelockDecrypt } from "../timelock.js";
import { blake2_256, bytesEqual } from "./_bytes.js";
import type { ChainState, TimelockedCommit } from "./_chain-state.js";
import { commitEpoch, revealCurrentEpoch } from "./_epoch-schedule.js";
import { readRevealPayload } from "./_reveal-payload.js";

// Commit-reveal v4 as spec 393 runs it (opentensor/subtensor tag v3.3.13-393):
// `commit_timelocked_weights` (macros/dispatches.rs, call 113) -> `internal_commit_timelocked_
// weights` (subnets/weights.rs), and the block step's `reveal_crv3_commits` (coinbase/
// block_step.rs, run in SubtensorModule's on_initialize every block) ->
// `reveal_crv3_commits_for_subnet` (coinbase/reveal_commits.rs). Spec 424 (v3.4.9-424) runs the
// same steps with the epoch from `current_epoch_with_lookahead` (_epoch-schedule.ts).

/** `MAX_CRV3_COMMIT_SIZE_BYTES`: the `commit` argument is a `BoundedVec<u8, 5000>`. */
export const MAX_COMMIT_BYTES = 5000;

/** Unrevealed commits a hotkey may hold in one `(netuid_index, epoch)` entry. */
export const MAX_UNREVEALED_COMMITS = 10;

/**
 * `commit_timelocked_weights`' declared weight: 94,980,000 ref time plus 10 reads and 2 writes
 * at RocksDbWeight (25 µs and 100 µs each). It is `Pays::No`.
 */
export const COMMIT_TIMELOCKED_REF_TIME = 94_980_000n + 10n * 25_000_000n + 2n * 100_000_000n;

/** What a successful commit stored, or the SubtensorModule error's name. */
export type CommitOutcome =
  | {
      ok: true;
      netuidIndex: number;
      uid: number;
      /** The epoch the commit is stored (and so revealed `RevealPeriodEpochs` later) under. */
      epoch: number;
      /** blake2-256 of the commit bytes, the event's hash. */
      hash: Uint8Array;
    }
  | { ok: false; error: string };

/**
 * `commit_timelocked_weights` in the chain's order: mechanism exists, commit-reveal enabled,
 * version current, hotkey registered, commit rate limit, fewer than 10 commits of this hotkey
 * in the target epoch. On success the commit is appended to `TimelockedWeightCommits
 * (netuid_index, epoch)` (the next epoch when this block runs the subnet's epoch) and the
 * neuron's `LastUpdate` moves to this block, so the weights rate limit counts commits too.
 */
export function commitTimelockedWeights(
  state: ChainState,
  who: Uint8Array,
  block: number,
  netuid: number,
  commit: Uint8Array,
  revealRound: bigint,
  commitRevealVersion: number,
): CommitOutcome {
  const fail = (error: string): CommitOutcome => ({ ok: false, error });
  const mecid = 0;
  if (!state.subnetExists(netuid) || state.mechanismCount(netuid) <= mecid) {
    return fail("MechanismDoesNotExist");
  }
  const netuidIndex = netuidStorageIndex(netuid, mecid);
  if (!state.commitRevealEnabled(netuid)) return fail("CommitRevealDisabled");
  if (commitRevealVersion !== state.commitRevealVersion()) {
    return fail("IncorrectCommitRevealVersion");
  }
  const uid = state.uidOf(netuid, who);
  if (uid === undefined) return fail("HotKeyNotRegisteredInSubNet");
  if (!checkRateLimit(state, netuid, netuidIndex, uid, block)) {
    return fail("CommittingWeightsTooFast");
  }
  const epoch = commitEpoch(state, netuid, block);
  const commits = state.timelockedCommits(netuidIndex, epoch);
  const mine = commits.filter((c) => bytesEqual(c.who, who)).length;
  if (mine >= MAX_UNREVEALED_COMMITS) return fail("TooManyUnrevealedCommits");
  commits.push({ who, commitBlock: BigInt(block), commit, revealRound });
  state.setTimelockedCommits(netuidIndex, epoch, commits);
  state.setLastUpdate(netuidIndex, uid, block);
  return { ok: true, netuidIndex, uid, epoch, hash: blake2_256(commit) };
}

/** An event the reveal step deposits (in the block's initialization phase). */
export type RevealEvent =
  | { name: "WeightsSet"; netuidIndex: number; uid: number }
  | { name: "TimelockedWeightsRevealed"; netuidIndex: number; who: Uint8Array };

/** The reveal step's view of the Drand pallet: the stored pulse's signature, if any. */
export type PulseLookup = (round: bigint) => Uint8Array | undefined;

/**
 * `reveal_crv3_commits` at the start of block `block`: for every subnet but the root, commits
 * stored for epoch `current - RevealPeriodEpochs` are decrypted with `Drand.Pulses
 * (reveal_round)` and set as their hotkey's weights. A commit whose pulse is not stored yet stays
 * and is retried every block of that epoch; once the epoch is over it is removed, unrevealed.
 * A commit that does not deserialize, decrypt, decode, name its committer or pass
 * `internal_set_weights` is dropped and only logged: the chain raises no event for it.
 */
export function revealTimelockedCommits(
  state: ChainState,
  block: number,
  pulse: PulseLookup,
  log: Logger,
): RevealEvent[] {
  const events: RevealEvent[] = [];
  for (const netuid of state.subnets()) {
    if (netuid === 0) continue;
    revealSubnet(state, block, netuid, pulse, log, events);
  }
  return events;
}

function revealSubnet(
  state: ChainState,
  block: number,
  netuid: number,
  pulse: PulseLookup,
  log: Logger,
  events: RevealEvent[],
): void {
  const revealPeriod = state.revealPeriod(netuid);
  const currentEpoch = revealCurrentEpoch(state, netuid, block);
  const revealEpoch = Math.max(0, currentEpoch - revealPeriod);
  for (let mecid = 0; mecid < state.mechanismCount(netuid); mecid++) {
    const netuidIndex = netuidStorageIndex(netuid, mecid);
    for (const epoch of state.timelockedCommitEpochs(netuidIndex)) {
      if (epoch >= revealEpoch) continue;
      // Removed without a word on finney; a dev chain says so.
      for (const c of state.timelockedCommits(netuidIndex, epoch)) {
        log.warn("local subtensor: timelocked commit expired unrevealed", {
          ...describe(netuidIndex, c),
          epoch,
          reason: state.hasPulse(c.revealRound)
            ? "its pulse came after its reveal epoch"
            : "its drand round was never stored",
        });
      }
      state.setTimelockedCommits(netuidIndex, epoch, []);
    }
    // As on finney, this returns for the whole subnet (after the first mechanism's cleanup).
    if (currentEpoch < revealPeriod) return;

    const entries = state.timelockedCommits(netuidIndex, revealEpoch);
    if (entries.length === 0) continue;
    state.setTimelockedCommits(netuidIndex, revealEpoch, []);
    const unrevealed: TimelockedCommit[] = [];
    for (const c of entries) {
      const signature = pulse(c.revealRound);
      if (signature === undefined) {
        log.debug("local subtensor: timelocked commit waits for its drand round", {
          ...describe(netuidIndex, c),
        });
        unrevealed.push(c);
        continue;
      }
      const dropped = (reason: string, fields: Record<string, unknown> = {}) =>
        log.warn("local subtensor: timelocked commit dropped (no event, as on finney)", {
          ...describe(netuidIndex, c),
          reason,
          ...fields,
        });
      let plaintext: Uint8Array;
      try {
        plaintext = timelockDecrypt(tleWithoutTrailingBytes(c.commit), signature);
      } catch (error) {
        const code = error instanceof TimelockError ? error.code : "error";
        dropped(`could not decrypt the commit (${code})`, { detail: (error as Error).message });
        continue;
      }
      const payload = readRevealPayload(plaintext, c.who);
      if (!payload.ok) {
        dropped(payload.reason);
        continue;
      }
      const outcome = internalSetWeights(
        state.weightsView(),
        c.who,
        block,
        netuid,
        mecid,
        payload.uids,
        payload.values,
        payload.versionKey,
      );
      if (!outcome.ok) {
        dropped(`do_set_mechanism_weights failed: ${outcome.error}`, {
          versionKey: payload.versionKey.toString(),
        });
        continue;
      }
      state.storeWeights(
        outcome.netuidIndex,
        outcome.uid,
        outcome.weights,
        outcome.updateLastUpdate,
        block,
      );
      events.push({ name: "WeightsSet", netuidIndex: outcome.netuidIndex, uid: outcome.uid });
      events.push({ name: "TimelockedWeightsRevealed", netuidIndex, who: c.who });
    }
    if (unrevealed.length > 0) state.setTimelockedCommits(netuidIndex, revealEpoch, unrevealed);
  }
}

function describe(netuidIndex: number, c: TimelockedCommit): Record<string, unknown> {
  return {
    netuid: netuidIndex,
    hotkey: encodeAddress(c.who, 42),
    commitBlock: Number(c.commitBlock),
    revealRound: c.revealRound.toString(),
  };
}

// arkworks' deserialize_compressed reads the fields it needs and ignores whatever follows, so
// the chain decrypts a commit with trailing bytes; the local decoder refuses them, so they are
// cut first. The layout: u (96 bytes), then v, w, body and cipher_suite, each behind an 8-byte
// little-endian length. Anything shorter is passed whole and fails to parse, as on the chain.
function tleWithoutTrailingBytes(commit: Uint8Array): Uint8Array {
  let offset = 96;
  const view = new DataView(commit.buffer, commit.byteOffset, commit.byteLength);
  for (let field = 0; field < 4; field++) {
    if (offset + 8 > commit.length) return commit;
    const length = view.getBigUint64(offset, true);
    if (length > BigInt(commit.length - offset - 8)) return commit;
    offset += 8 + Number(length);
  }
  return commit.subarray(0, offset);
}
