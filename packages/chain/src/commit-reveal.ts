import type { Logger } from "@platform/core";
import type { ApiPromise } from "@polkadot/api";
import type { QueryableStorageEntry } from "@polkadot/api/types";
import type { EventRecord } from "@polkadot/types/interfaces";
import type { Codec } from "@polkadot/types/types";
import { hexToU8a, isHex, u8aToHex } from "@polkadot/util";
import { blake2AsHex } from "@polkadot/util-crypto";
import type { BlockRef, CallOptions, ChainClient } from "./chain-client.js";
import { ChainError } from "./chain-client.js";
import { DRAND_QUICKNET, decodeBeaconPublicKey } from "./drand-beacon.js";
import {
  advanceSchedule,
  commitEpochIn,
  type EpochSchedule,
  firstCommitBlockOfEpoch,
  plannedRevealBlock,
  readEpochSchedule,
  revealEpochOfBlock,
  revealRoundFor,
} from "./epoch-model.js";
import { epochIndex, firstBlockOfEpoch, shouldRunEpoch } from "./rules/epoch.js";
import type { RevealCause, RevealSettlement, SubmissionRecord } from "./submission-store.js";
import {
  checkRevealedWeights,
  maxUpscaleU16,
  publicKeyHex,
  readSubnetRules,
  type SubnetRules,
} from "./subnet-rules.js";
import { SECURITY_BLOCK_OFFSET } from "./weights-tlock-payload.js";

// Commit-reveal v4 as a validator drives it: which beacon key a commit is encrypted to, the drand
// round and epochs it is locked to, and how its reveal is confirmed from the chain's own storage
// and events. Every epoch is computed by the epoch model the runtime runs (epoch-model.ts): the
// spec-393 block-number formula, or the counter of v3.4.8-423 on.

/** The payload version this validator encrypts (`WeightsTlockPayload` with the hotkey). */
export const COMMIT_REVEAL_VERSION = 4;

/** Unrevealed commits a hotkey may hold in one epoch (`TooManyUnrevealedCommits` past it). */
export const MAX_UNREVEALED_COMMITS = 10;

/** finney's genesis hash (reference/chain vectors). */
export const FINNEY_GENESIS_HASH =
  "0x2f0555cc76fc2840a25a6ea3b9637146806f1f44b090c175ffde2a7e5ab36c03";
/** The public testnet's genesis hash. */
export const TESTNET_GENESIS_HASH =
  "0x8f9cf856bf558a14440e75569c9e58594757048d7b3a84b5d25f6bd978263105";

/** finney's and testnet's block time, which bittensor's SDK also assumes for the reveal round. */
export const PUBLIC_BLOCK_TIME_SECONDS = 12;

const PUBLIC_GENESIS = new Set([FINNEY_GENESIS_HASH, TESTNET_GENESIS_HASH]);

/** The beacon commits are encrypted to, and where the key came from. */
export interface BeaconChoice {
  publicKey: Uint8Array;
  /** 0x hex of `publicKey`. */
  publicKeyHex: string;
  /** Unix seconds of round 1, and seconds per round (quicknet's unless the local chain says). */
  genesisTime: number;
  period: number;
  /**
   * `option`: PLATFORM_DRAND_PUBLIC_KEY (`drandPublicKey`); `local-subtensor`: the local chain's
   * `dev_drandInfo`; `quicknet`: drand quicknet, what finney's Drand pallet stores.
   */
  source: "option" | "quicknet" | "local-subtensor";
}

/** How the beacon is chosen (see {@link resolveBeacon}). */
export interface BeaconOptions {
  /** PLATFORM_DRAND_PUBLIC_KEY: a 96-byte compressed G2 key, hex (with or without 0x) or bytes. */
  drandPublicKey?: string | Uint8Array | undefined;
  /** The local subtensor's genesis hash, when the caller started it (`platform dev`). */
  localChainGenesis?: string | undefined;
}

/** Parses a beacon public key (hex with or without 0x, or bytes); throws RangeError when invalid. */
export function parseBeaconPublicKey(key: string | Uint8Array): Uint8Array {
  let bytes: Uint8Array;
  if (typeof key === "string") {
    const text = key.trim();
    const hex = text.startsWith("0x") ? text : `0x${text}`;
    if (!isHex(hex)) throw new RangeError("the drand public key must be hex");
    bytes = hexToU8a(hex);
  } else bytes = key;
  decodeBeaconPublicKey(bytes);
  return bytes;
}

const quicknet = (): BeaconChoice => {
  const publicKey = hexToU8a(`0x${DRAND_QUICKNET.publicKeyHex}`);
  return {
    publicKey,
    publicKeyHex: u8aToHex(publicKey),
    genesisTime: DRAND_QUICKNET.genesisTime,
    period: DRAND_QUICKNET.periodSeconds,
    source: "quicknet",
  };
};

/**
 * The beacon key commits are encrypted to:
 * 1. `drandPublicKey` (PLATFORM_DRAND_PUBLIC_KEY) when given, on any chain, with quicknet's
 *    schedule (the local subtensor's beacon keeps quicknet's genesis time and period);
 * 2. otherwise drand quicknet on finney and testnet (known by their genesis hashes);
 * 3. otherwise, on a chain whose genesis is `localChainGenesis` (the caller started it), the
 *    local subtensor's `dev_drandInfo` key and schedule (an error if it does not answer);
 * 4. otherwise, on any other chain, `dev_drandInfo` if the node answers it (a local subtensor
 *    started elsewhere, e.g. `platform chain local`; its genesis is random per start), else
 *    quicknet (a subtensor localnet or devnet ingests quicknet like finney).
 */
export async function resolveBeacon(
  client: ChainClient,
  options: BeaconOptions,
  call: CallOptions = {},
): Promise<BeaconChoice> {
  if (options.drandPublicKey !== undefined && options.drandPublicKey !== "") {
    const publicKey = parseBeaconPublicKey(options.drandPublicKey);
    return { ...quicknet(), publicKey, publicKeyHex: u8aToHex(publicKey), source: "option" };
  }
  return client.call(
    "choosing the drand beacon",
    async (api, connection) => {
      const genesis = api.genesisHash.toHex().toLowerCase();
      if (PUBLIC_GENESIS.has(genesis)) return quicknet();
      const local = options.localChainGenesis?.toLowerCase();
      if (local !== undefined && local !== genesis) return quicknet();
      let info: unknown;
      try {
        info = await connection.provider.send("dev_drandInfo", []);
      } catch (error) {
        if (local !== undefined) {
          throw new Error(
            `the local subtensor (genesis ${genesis}) did not answer dev_drandInfo: ${(error as Error).message}`,
          );
        }
        return quicknet();
      }
      const parsed = info as { public_key?: unknown; genesis_time?: unknown; period?: unknown };
      if (
        typeof parsed?.public_key !== "string" ||
        typeof parsed.genesis_time !== "number" ||
        typeof parsed.period !== "number" ||
        !(parsed.period > 0)
      ) {
        throw new Error("dev_drandInfo answered without {public_key, genesis_time, period}");
      }
      const publicKey = parseBeaconPublicKey(parsed.public_key);
      return {
        publicKey,
        publicKeyHex: u8aToHex(publicKey),
        genesisTime: parsed.genesis_time,
        period: parsed.period,
        source: "local-subtensor",
      };
    },
    call,
  );
}

/**
 * On the spec-393 block-number model: the epoch a commit included in `block` is stored under,
 * the block's epoch or the next one when `block` runs the subnet's epoch
 * (`internal_commit_timelocked_weights`). `commitEpochIn` gives it on either model.
 */
export function commitEpochOf(netuid: number, tempo: number, block: number): number {
  return epochIndex(netuid, tempo, block) + (shouldRunEpoch(netuid, tempo, block) ? 1 : 0);
}

/** Block-number model: the first block whose commits go to `epoch` (the one running epoch - 1). */
export function firstCommitBlockOf(netuid: number, tempo: number, epoch: number): number {
  return Math.max(0, firstBlockOfEpoch(netuid, tempo, epoch) - 1);
}

/**
 * Blocks between the best head (the schedule's block) and the block whose pulse a commit built on
 * it is locked to (the round's margin: everything between building and inclusion must fit in it).
 * The round aims 3 blocks past the first block of the reveal epoch, so on the block-number model
 * the margin is `tempo + 4` blocks at an epoch's first block and shrinks to 4 at its last one.
 */
export function roundMarginBlocks(schedule: EpochSchedule, revealPeriodEpochs: number): number {
  return plannedRevealBlock(schedule, revealPeriodEpochs) + SECURITY_BLOCK_OFFSET - schedule.block;
}

/**
 * The least round margin a commit is built with: 6 blocks, or `tempo + 4` on a subnet whose
 * epochs are shorter. Near an epoch's end the validator waits (at most 2 blocks) for the next
 * epoch, whose commits reveal no later and are due a whole epoch further away.
 */
export function minRoundMarginBlocks(tempo: number): number {
  return Math.min(6, tempo + 4);
}

/**
 * The first block after the state's best head whose commits the chain stores under the epoch
 * after `targetEpoch` (the block that runs the epoch, or its lookahead): a commit planned now
 * must be included before it (`_commit-era.ts`). Undefined when the subnet runs no epochs.
 */
export function commitDeathBound(state: CommitState): number | undefined {
  return firstCommitBlockOfEpoch(state.schedule, state.targetEpoch + 1);
}

/**
 * Blocks a commit planned from the state's best head can still be included in under its planned
 * epoch (`best + 1` up to the bound); Infinity when the subnet runs no epochs.
 */
export function commitInclusionRoom(state: CommitState): number {
  const bound = commitDeathBound(state);
  return bound === undefined ? Number.POSITIVE_INFINITY : bound - (state.best.number + 1);
}

/**
 * The least inclusion room a commit is sent with: with fewer blocks left before the epoch's
 * block the sender waits for the next epoch (a commit planned into the next block alone would
 * die whenever that block is full or late).
 */
export const MIN_COMMIT_INCLUSION_ROOM = 2;

/** What a commit needs from the chain besides the subnet's rules, read at `rules.best`. */
export interface CommitState {
  /** The block everything here was read at (the rules' best head). */
  best: BlockRef;
  /** `CommitRevealWeightsVersion`. */
  commitRevealVersion: number;
  /** `RevealPeriodEpochs(netuid)`. */
  revealPeriodEpochs: number;
  /** `Tempo(netuid)` at the best head. */
  tempo: number;
  /** The subnet's epoch schedule at the best head, in the model the runtime runs. */
  schedule: EpochSchedule;
  /** `Timestamp.Now` of the best head (Unix ms): "now" on the chain's own clock. */
  nowMs: number;
  /** Seconds per block used for the reveal round (see {@link readCommitState}). */
  blockTimeSeconds: number;
  /** `Drand.LastStoredRound`. */
  lastStoredRound: bigint;
  /** 0x hex of `Drand.BeaconConfig.public_key`, if the chain has one. */
  beaconConfigKey: string | null;
  /** The epoch a commit included in the next block is stored under. */
  targetEpoch: number;
  /** Commits of this hotkey in `TimelockedWeightCommits(netuid, targetEpoch)`. */
  ownCommitsInTargetEpoch: number;
}

/** A storage entry of the runtime, or a clear error when the runtime lacks it. */
export function storageEntry(
  api: ApiPromise,
  pallet: string,
  item: string,
): QueryableStorageEntry<"promise"> {
  const found = api.query[pallet]?.[item];
  if (!found) throw new Error(`the chain's runtime has no ${pallet}.${item}`);
  return found;
}

const primitive = async (
  api: ApiPromise,
  pallet: string,
  item: string,
  hash: string,
  ...args: unknown[]
): Promise<string> =>
  ((await storageEntry(api, pallet, item).at(hash, ...args)) as Codec).toString();

/** One entry of `TimelockedWeightCommits`: committer (0x key), block, commit hash, round. */
export interface StoredCommit {
  who: string;
  commitBlock: number;
  hash: string;
  revealRound: bigint;
}

/** `TimelockedWeightCommits(netuid, epoch)` at block `hash`, in storage order. */
export async function readStoredCommits(
  api: ApiPromise,
  hash: string,
  netuid: number,
  epoch: number,
): Promise<StoredCommit[]> {
  const value = (await storageEntry(api, "subtensorModule", "timelockedWeightCommits").at(
    hash,
    netuid,
    epoch,
  )) as unknown as (Codec & { toU8a(bare?: boolean): Uint8Array })[][];
  return [...value].map((tuple) => {
    const [who, block, commit, round] = tuple as (Codec & { toU8a(bare?: boolean): Uint8Array })[];
    return {
      who: u8aToHex((who as Codec).toU8a()),
      commitBlock: Number((block as Codec).toString()),
      hash: blake2AsHex((commit as Codec & { toU8a(bare?: boolean): Uint8Array }).toU8a(true), 256),
      revealRound: BigInt((round as Codec).toString()),
    };
  });
}

/**
 * Reads what a commit needs at `rules.best`: the version, reveal period and tempo, the best
 * block's `Timestamp.Now` ("now" for the reveal round: with a simulated clock, as on the local
 * subtensor, the wall clock would be wrong), the drand state, and this hotkey's commits in the
 * epoch a commit sent now would be stored under. The block time is `blockTimeSeconds` when
 * given, 12 s on finney and testnet (bittensor's constant), and elsewhere the chain's own
 * spacing of `Timestamp.Now` over the last (up to) 8 blocks.
 */
export async function readCommitState(
  client: ChainClient,
  rules: SubnetRules,
  hotkey: Uint8Array,
  options: CallOptions & { blockTimeSeconds?: number | undefined } = {},
): Promise<CommitState> {
  const { netuid, best } = rules;
  const who = u8aToHex(hotkey);
  return client.call(
    `reading the commit-reveal state of netuid ${netuid} at block ${best.number}`,
    async (api) => {
      const span = Math.min(8, best.number);
      const pastHash =
        span > 0 ? (await api.rpc.chain.getBlockHash(best.number - span)).toHex() : best.hash;
      const [schedule, revealPeriod, version, now, past, lastStored, beaconConfig] =
        await Promise.all([
          readEpochSchedule(api, best, netuid),
          primitive(api, "subtensorModule", "revealPeriodEpochs", best.hash, netuid),
          primitive(api, "subtensorModule", "commitRevealWeightsVersion", best.hash),
          primitive(api, "timestamp", "now", best.hash),
          primitive(api, "timestamp", "now", pastHash),
          primitive(api, "drand", "lastStoredRound", best.hash),
          storageEntry(api, "drand", "beaconConfig").at(best.hash),
        ]);
      const targetEpoch = commitEpochIn(schedule, best.number + 1);
      const stored = await readStoredCommits(api, best.hash, netuid, targetEpoch);
      let blockTimeSeconds = options.blockTimeSeconds;
      if (blockTimeSeconds === undefined) {
        const genesis = api.genesisHash.toHex().toLowerCase();
        const measured = span > 0 ? (Number(now) - Number(past)) / span / 1000 : 0;
        blockTimeSeconds =
          PUBLIC_GENESIS.has(genesis) || !(measured > 0) ? PUBLIC_BLOCK_TIME_SECONDS : measured;
      }
      const config = (beaconConfig as Codec).toJSON() as { publicKey?: unknown } | null;
      return {
        best,
        commitRevealVersion: Number(version),
        revealPeriodEpochs: Number(revealPeriod),
        tempo: schedule.tempo,
        schedule,
        nowMs: Number(now),
        blockTimeSeconds,
        lastStoredRound: BigInt(lastStored),
        beaconConfigKey:
          typeof config?.publicKey === "string" && config.publicKey.length > 2
            ? config.publicKey.toLowerCase()
            : null,
        targetEpoch,
        ownCommitsInTargetEpoch: stored.filter((c) => c.who === who).length,
      };
    },
    options,
  );
}

/** A best head, its `Timestamp.Now` and (given a netuid) the subnet's epoch schedule there. */
export interface BestTime {
  best: BlockRef;
  nowMs: number;
  schedule?: EpochSchedule | undefined;
}

/** The best head and its `Timestamp.Now`, read now; with `netuid`, the schedule there too. */
export async function readBestTime(
  client: ChainClient,
  options: CallOptions & { netuid?: number } = {},
): Promise<BestTime> {
  return client.call(
    "reading the best head and its time",
    async (api) => {
      const header = await api.rpc.chain.getHeader();
      const best = { number: header.number.toNumber(), hash: header.hash.toHex() };
      const [now, schedule] = await Promise.all([
        primitive(api, "timestamp", "now", best.hash),
        options.netuid === undefined ? undefined : readEpochSchedule(api, best, options.netuid),
      ]);
      return { best, nowMs: Number(now), schedule };
    },
    options,
  );
}

/**
 * `state` moved to a newer best head (and its time, and its schedule when read there; else the
 * old schedule run forward): the epoch a commit goes to follows it. Everything else (version,
 * reveal period, rate limit) was checked at the older head and only a later head can pass it
 * more easily.
 */
export function advanceCommitState(_netuid: number, state: CommitState, at: BestTime): CommitState {
  if (at.best.number <= state.best.number) return state;
  const schedule =
    at.schedule && at.schedule.block === at.best.number
      ? at.schedule
      : advanceSchedule(state.schedule, at.best.number);
  const targetEpoch = commitEpochIn(schedule, at.best.number + 1);
  return {
    ...state,
    best: at.best,
    nowMs: at.nowMs,
    tempo: schedule.tempo,
    schedule,
    targetEpoch,
    ownCommitsInTargetEpoch: targetEpoch === state.targetEpoch ? state.ownCommitsInTargetEpoch : 0,
  };
}

/** The round and epochs a commit sent now is locked to. */
export interface CommitPlan {
  revealRound: number;
  /** The epoch it is expected to be stored under (included in the next block). */
  commitEpoch: number;
  /** `commitEpoch + RevealPeriodEpochs`. */
  revealEpoch: number;
}

/**
 * The reveal round for the best block's schedule (bittensor-drand 1.2's formula on the
 * block-number model, 2.0's `generate_commit_v2` on the counter), from the subnet's reveal
 * period, the block time and the best block's `Timestamp.Now`, on the beacon's schedule; and the
 * epochs the commit goes to.
 */
export function planCommit(
  _netuid: number,
  state: CommitState,
  beacon: Pick<BeaconChoice, "genesisTime" | "period">,
): CommitPlan {
  const round = revealRoundFor(state.schedule, {
    revealPeriodEpochs: state.revealPeriodEpochs,
    blockTimeSeconds: state.blockTimeSeconds,
    nowSeconds: state.nowMs / 1000,
    genesisTime: beacon.genesisTime,
    period: beacon.period,
  });
  return {
    revealRound: round,
    commitEpoch: state.targetEpoch,
    revealEpoch: state.targetEpoch + state.revealPeriodEpochs,
  };
}

/** The committed vector as the chain stores it in `Weights(netuid, uid)`: (uid, max-upscaled). */
export function expectedWeights(uids: readonly number[], weights: readonly number[]) {
  const upscaled = maxUpscaleU16(weights);
  return uids.map((uid, i) => [uid, upscaled[i] as number] as [number, number]);
}

/**
 * The epoch the chain stored a commit included in block `at` under: the key the epoch model of
 * that block's runtime gives (`commitEpochIn`), confirmed by finding the commit (by hash) in
 * `TimelockedWeightCommits` at that block (the neighbouring keys are searched too); also the
 * reveal period there.
 */
export async function readCommitEpochs(
  client: ChainClient,
  netuid: number,
  at: BlockRef,
  commitHash: string,
  options: CallOptions = {},
): Promise<{ commitEpoch: number; revealEpoch: number }> {
  return client.call(
    `reading the epoch of commit ${commitHash} in block ${at.number}`,
    async (api) => {
      const [schedule, revealPeriod] = await Promise.all([
        readEpochSchedule(api, at, netuid),
        primitive(api, "subtensorModule", "revealPeriodEpochs", at.hash, netuid),
      ]);
      const computed = commitEpochIn(schedule, at.number);
      for (const epoch of [computed, computed + 1, computed - 1]) {
        if (epoch < 0) continue;
        const stored = await readStoredCommits(api, at.hash, netuid, epoch);
        if (stored.some((c) => c.hash === commitHash)) {
          return { commitEpoch: epoch, revealEpoch: epoch + Number(revealPeriod) };
        }
      }
      // Already revealed in its own block cannot happen (the reveal epoch is later); keep the
      // computed one rather than fail the confirmation.
      return { commitEpoch: computed, revealEpoch: computed + Number(revealPeriod) };
    },
    options,
  );
}

/** Where tracking a commit's reveal stands. */
export type RevealTracking =
  | { state: "waiting"; checkedAt: number }
  | { state: "settled"; settlement: RevealSettlement };

const STATE_GONE = /UnknownBlock|State already discarded|not found|pruned|discarded/i;

const matchesEvent = (r: EventRecord, method: string) =>
  r.event.section === "subtensorModule" && r.event.method === method;

/**
 * Follows one committed commit to its reveal, from the chain alone. While the commit is still in
 * `TimelockedWeightCommits(netuid, commitEpoch)` at the finalized head it is `waiting`. Once it
 * is not, the block `D` where it left is found by bisection (from `lastPresent`, or its
 * inclusion block), and that block tells what happened:
 * - its initialization events hold `TimelockedWeightsRevealed(netuid, who)` for every commit of
 *   this hotkey taken out there, and `Weights(netuid, uid)` at `D` equal the committed vector
 *   (max-upscaled) -> `revealed` (an earlier commit overwritten in the same block by a later one
 *   of the same hotkey counts as revealed; only the last one's weights can be compared);
 * - `D` is past the reveal epoch (the commit expired): `pulse_missing` when `Drand.Pulses(round)`
 *   was never stored, else `pulse_late`;
 * - taken out inside the reveal epoch with no event (the chain only logs why):
 *   `decryption_failed` when it was encrypted to another key than `Drand.BeaconConfig`'s,
 *   `stake_too_low` when the hotkey's stake was below `StakeThreshold` at `D - 1`,
 *   `payload_refused` when the weights fail `set_weights`' other checks as the chain stood then,
 *   else `dropped_at_reveal`.
 * When the node no longer has the state to tell, `unverifiable`.
 */
export async function trackReveal(
  client: ChainClient,
  row: SubmissionRecord,
  options: CallOptions & { lastPresent?: number | undefined; log?: Logger } = {},
): Promise<RevealTracking> {
  const commit = row.commit;
  if (!commit || commit.commitEpoch === null) {
    throw new Error(`attempt #${row.id} is not a committed commit`);
  }
  const netuid = row.netuid;
  const epoch = commit.commitEpoch;
  const who = publicKeyHex(row.hotkey) as string;
  const included = row.finalizedBlock?.number ?? row.inBlock?.number ?? row.builtBlock.number;

  const hashOf = (api: ApiPromise, n: number) =>
    api.rpc.chain.getBlockHash(n).then((h) => h.toHex());
  const present = (n: number) =>
    client.call(
      `looking for commit ${commit.hash} at block ${n}`,
      async (api) => {
        const hash = await hashOf(api, n);
        return (await readStoredCommits(api, hash, netuid, epoch)).some(
          (c) => c.hash === commit.hash,
        );
      },
      options,
    );

  const unverifiable = (detail: string): RevealTracking => ({
    state: "settled",
    settlement: { status: "unrevealed", block: null, cause: "unverifiable", detail },
  });

  try {
    const finalized = await client.finalized(options);
    const now = await client.call(
      `looking for commit ${commit.hash} at block ${finalized.number}`,
      async (api) => {
        const [stored, schedule, revealPeriod] = await Promise.all([
          readStoredCommits(api, finalized.hash, netuid, epoch),
          readEpochSchedule(api, finalized, netuid),
          primitive(api, "subtensorModule", "revealPeriodEpochs", finalized.hash, netuid),
        ]);
        return {
          present: stored.some((c) => c.hash === commit.hash),
          schedule,
          revealPeriod: Number(revealPeriod),
        };
      },
      options,
    );
    if (now.present) return { state: "waiting", checkedAt: finalized.number };

    // Bisect (lo present, hi absent) down to the block that took it out. The chain touches an
    // epoch's commits only from the first block of their reveal epoch on (to reveal them, then to
    // expire them), so the search starts at the block before it: after a restart that is the
    // recent past, within what a non-archive node still has state for.
    const floor = Math.max(options.lastPresent ?? 0, included);
    const revealFirst = await revealEpochStart(
      client,
      now.schedule,
      epoch + now.revealPeriod,
      options,
    );
    let lo = floor;
    let hi = finalized.number;
    if (revealFirst !== undefined && revealFirst - 1 > floor && revealFirst - 1 < hi) {
      // On the counter model the start is read back from the chain: use it only if the commit
      // was indeed still there.
      if (now.schedule.model === "block-number" || (await present(revealFirst - 1))) {
        lo = revealFirst - 1;
      }
    }
    if (lo >= hi) lo = Math.min(included, hi - 1);
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (await present(mid)) lo = mid;
      else hi = mid;
    }
    const d = hi;
    const facts = await client.call(
      `reading the reveal of commit ${commit.hash} in block ${d}`,
      async (api) => {
        const [hashD, hashBefore] = await Promise.all([hashOf(api, d), hashOf(api, d - 1)]);
        const [
          events,
          before,
          after,
          schedule,
          revealPeriod,
          beaconConfig,
          pulse,
          lastStored,
          uidAt,
          scheduleBefore,
        ] = await Promise.all([
          storageEntry(api, "system", "events").at(hashD) as unknown as Promise<EventRecord[]>,
          readStoredCommits(api, hashBefore, netuid, epoch),
          readStoredCommits(api, hashD, netuid, epoch),
          readEpochSchedule(api, { number: d, hash: hashD }, netuid),
          primitive(api, "subtensorModule", "revealPeriodEpochs", hashD, netuid),
          storageEntry(api, "drand", "beaconConfig").at(hashD),
          storageEntry(api, "drand", "pulses").at(hashBefore, commit.revealRound),
          primitive(api, "drand", "lastStoredRound", hashBefore),
          row.uid === null
            ? storageEntry(api, "subtensorModule", "uids")
                .at(hashD, netuid, row.hotkey)
                .then((v) => (v as Codec).toJSON() as number | null)
            : Promise.resolve(row.uid),
          readEpochSchedule(api, { number: d - 1, hash: hashBefore }, netuid),
        ]);
        const weights =
          uidAt === null || uidAt === undefined
            ? null
            : ((
                (await storageEntry(api, "subtensorModule", "weights").at(
                  hashD,
                  netuid,
                  uidAt,
                )) as Codec
              ).toJSON() as [number, number][]);
        const revealed = [...events].filter(
          (r) =>
            r.phase.isInitialization &&
            matchesEvent(r, "TimelockedWeightsRevealed") &&
            Number(r.event.data[0]?.toString()) === netuid &&
            u8aToHex(r.event.data[1]?.toU8a()) === who,
        ).length;
        const config = (beaconConfig as Codec).toJSON() as { publicKey?: unknown } | null;
        return {
          block: { number: d, hash: hashD },
          before: { number: d - 1, hash: hashBefore },
          revealed,
          // This hotkey's commits taken out at D, in the order the chain processed them.
          processed: before
            .filter((c) => c.who === who)
            .filter((c) => {
              const i = after.findIndex((a) => a.who === who && a.hash === c.hash);
              if (i < 0) return true;
              after.splice(i, 1);
              return false;
            }),
          schedule,
          scheduleBefore,
          revealPeriod: Number(revealPeriod),
          beaconKey: typeof config?.publicKey === "string" ? config.publicKey.toLowerCase() : null,
          pulseStored: !(pulse as Codec).isEmpty,
          lastStoredRound: lastStored,
          weights,
        };
      },
      options,
    );

    const mine = facts.processed.findIndex((c) => c.hash === commit.hash);
    const last = mine === facts.processed.length - 1;
    const expected = JSON.stringify(expectedWeights(row.uids, row.weights));
    const weightsMatch = facts.weights !== null && JSON.stringify(facts.weights) === expected;
    const settled = (
      status: "revealed" | "unrevealed",
      cause: RevealCause | null,
      detail: string | null,
    ): RevealTracking => ({
      state: "settled",
      settlement: { status, block: facts.block, cause, detail },
    });

    // A block reveals only the commits of epoch `current - RevealPeriodEpochs` and silently
    // drops older ones: which of the two happened to this commit is told by its epoch, never by
    // the block's events (another commit of the hotkey, of the next epoch, may reveal in the
    // very block that expires this one).
    const epochAtD = revealEpochOfBlock(facts.scheduleBefore, facts.schedule);
    const revealEpoch = epoch + facts.revealPeriod;
    if (epochAtD > revealEpoch) {
      const planned =
        facts.schedule.model === "counter"
          ? await plannedPulseBlock(client, netuid, included, facts.revealPeriod, options)
          : undefined;
      if (planned !== undefined && d <= planned) {
        return settled(
          "unrevealed",
          "epoch_moved",
          `reveal epoch ${revealEpoch} ended in block ${d}, before block ${planned} the schedule at its inclusion gave its round: the subnet's epochs were brought forward (an epoch triggered early, PendingEpochAt), so drand round ${commit.revealRound} was not due yet`,
        );
      }
      if (!facts.pulseStored) {
        return settled(
          "unrevealed",
          "pulse_missing",
          `drand round ${commit.revealRound} was never stored by block ${d - 1}, the end of reveal epoch ${revealEpoch} (Drand.LastStoredRound ${facts.lastStoredRound}): the beacon skipped it or the chain did not ingest it`,
        );
      }
      return settled(
        "unrevealed",
        "pulse_late",
        `drand round ${commit.revealRound} was stored only as reveal epoch ${revealEpoch} ended (block ${d - 1})`,
      );
    }
    if (epochAtD < revealEpoch) {
      return settled(
        "unrevealed",
        "dropped_at_reveal",
        `taken out of TimelockedWeightCommits in block ${d}, in epoch ${epochAtD}, before its reveal epoch ${revealEpoch}`,
      );
    }

    // Taken out in its reveal epoch: revealed, unless the block holds fewer reveal events of
    // this hotkey than commits of it taken out there.
    if (facts.revealed > 0 && facts.revealed >= facts.processed.length) {
      if (!last) {
        return settled(
          "revealed",
          null,
          `revealed in block ${facts.block.number}; a later commit of this hotkey revealed in the same block set the weights`,
        );
      }
      if (weightsMatch) return settled("revealed", null, null);
      return settled(
        "unrevealed",
        "weights_differ",
        `TimelockedWeightsRevealed(${netuid}, ${row.hotkey}) is in block ${facts.block.number}, but Weights(${netuid}, ${row.uid}) there are ${JSON.stringify(facts.weights)}, not the committed ${expected}`,
      );
    }
    if (facts.revealed > 0) {
      if (last && weightsMatch) return settled("revealed", null, null);
      return settled(
        "unrevealed",
        "ambiguous",
        `${facts.processed.length} commits of this hotkey left storage in block ${facts.block.number} and ${facts.revealed} were revealed`,
      );
    }
    if (facts.beaconKey !== null && facts.beaconKey !== commit.beaconPublicKey.toLowerCase()) {
      return settled(
        "unrevealed",
        "decryption_failed",
        `encrypted to beacon key ${short(commit.beaconPublicKey)}, but the chain's Drand.BeaconConfig key is ${short(facts.beaconKey)}: its pulses cannot decrypt it (the chain only logs this)`,
      );
    }
    let refusal: string | undefined;
    try {
      const rules = await readSubnetRules(client, netuid, {
        ...options,
        at: facts.before,
        hotkey: row.hotkey,
      });
      const check = checkRevealedWeights(
        rules,
        row.hotkey,
        { uids: row.uids, weights: row.weights, versionKey: row.versionKey },
        d,
      );
      if (!check.ok) refusal = check.check;
    } catch (error) {
      if (error instanceof ChainError) throw error;
      options.log?.warn("could not re-check a dropped commit's weights", {
        id: row.id,
        error: (error as Error).message,
      });
    }
    if (refusal === "NotEnoughStakeToSetWeights") {
      return settled(
        "unrevealed",
        "stake_too_low",
        `the chain decrypted it in block ${d} but the hotkey's stake was below StakeThreshold then (no event; the chain only logs this): stake more to the hotkey`,
      );
    }
    if (refusal) {
      return settled(
        "unrevealed",
        "payload_refused",
        `the chain decrypted it in block ${d} but its weights fail set_weights' ${refusal} check as the chain stood then (no event; the chain only logs this)`,
      );
    }
    return settled(
      "unrevealed",
      "dropped_at_reveal",
      `taken out in block ${d} of its reveal epoch ${revealEpoch} without TimelockedWeightsRevealed: the chain could not decrypt or decode it (it only logs why)`,
    );
  } catch (error) {
    if (error instanceof ChainError) throw error;
    const text = error instanceof Error ? error.message : String(error);
    if (STATE_GONE.test(text)) {
      return unverifiable(`the node no longer has the state to follow this commit (${text})`);
    }
    throw error;
  }
}

/**
 * The first block of `revealEpoch` (the one whose reveal step takes its commits): the formula's
 * first block of the epoch; on the counter model, the `LastEpochBlock` that moved the counter to
 * it, read back from the finalized head one epoch at a time (at most 4). Undefined when it
 * cannot be told.
 */
/**
 * The block whose pulse a commit included in block `included` was locked to, by the schedule
 * before that block (3 blocks past its predicted first reveal block); undefined when the node no
 * longer has that state or the subnet runs no epochs.
 */
async function plannedPulseBlock(
  client: ChainClient,
  netuid: number,
  included: number,
  revealPeriodEpochs: number,
  options: CallOptions,
): Promise<number | undefined> {
  try {
    const schedule = await client.call(
      `reading the epoch schedule at block ${included - 1}`,
      async (api) => {
        const hash = (await api.rpc.chain.getBlockHash(included - 1)).toHex();
        return readEpochSchedule(api, { number: included - 1, hash }, netuid);
      },
      options,
    );
    return plannedRevealBlock(schedule, revealPeriodEpochs) + SECURITY_BLOCK_OFFSET;
  } catch (error) {
    if (error instanceof ChainError && error.kind === "aborted") throw error;
    return undefined;
  }
}

async function revealEpochStart(
  client: ChainClient,
  atFinalized: EpochSchedule,
  revealEpoch: number,
  options: CallOptions,
): Promise<number | undefined> {
  if (atFinalized.model === "block-number") {
    return firstBlockOfEpoch(atFinalized.netuid, atFinalized.tempo, revealEpoch);
  }
  let schedule: EpochSchedule = atFinalized;
  for (let step = 0; step < 4 && schedule.model === "counter"; step++) {
    const index: number = schedule.state.epochIndex;
    const lastEpochBlock: number = schedule.state.lastEpochBlock;
    if (index === revealEpoch) return lastEpochBlock;
    if (index < revealEpoch || lastEpochBlock <= 0) return undefined;
    const before: number = lastEpochBlock - 1;
    schedule = await client.call(
      `reading the epoch schedule at block ${before}`,
      async (api) => {
        const hash = (await api.rpc.chain.getBlockHash(before)).toHex();
        return readEpochSchedule(api, { number: before, hash }, atFinalized.netuid);
      },
      options,
    );
  }
  return undefined;
}

function short(hex: string): string {
  return hex.length > 20 ? `${hex.slice(0, 12)}…${hex.slice(-6)}` : hex;
}
