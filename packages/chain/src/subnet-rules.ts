import type { Logger } from "@platform/core";
import type { ApiDecoration } from "@polkadot/api/types";
import type { Codec } from "@polkadot/types/types";
import { u8aToHex } from "@polkadot/util";
import { decodeAddress } from "@polkadot/util-crypto";
import type { BlockRef, CallOptions, ChainClient } from "./chain-client.js";
import { readKeysAt, uidsOf } from "./chain-metagraph.js";
import { type RuntimeFeatures, runtimeFeatures } from "./epoch-model.js";
import { isMaxLimited, maxUpscaleU16 } from "./rules/fixed-i32f32.js";
import {
  checkRateLimit,
  internalSetWeights,
  setWeights,
  type WeightsStateView,
} from "./rules/set-weights-checks.js";
import { readWeightsStake, type WeightsStakeRead } from "./weights-stake.js";

// The chain's own arithmetic and check order, shared with the local subtensor so the validator's
// local checks and the dev chain can never disagree (subtensor v3.3.13-393, weights.rs).
export { isMaxLimited, maxUpscaleU16 };

/** The uid that receives weight nobody earned: the subnet owner's burn uid. */
export const BURN_UID = 0;

/** The chain's u16 "1.0", and the `MaxWeightsLimit` value that disables the max check. */
export const U16_ONE = 0xffff;

/**
 * What `set_weights` checks, read for one subnet at one pinned finalized block: hyperparameters,
 * the per-uid vectors and the hotkeys. Plus `LastUpdate` at the best head, because the chain
 * checks the rate limit against the block that includes the extrinsic, not a finalized one.
 */
export interface SubnetRules {
  netuid: number;
  /** The finalized block everything but `bestLastUpdate` was read at. */
  block: BlockRef;
  /** The best head `bestLastUpdate` was read at. */
  best: BlockRef;
  /** `NetworksAdded`. */
  exists: boolean;
  /** `MechanismCountCurrent` (1 unless the subnet has mechanisms). */
  mechanismCount: number;
  /** `CommitRevealWeightsEnabled` (true by default, even for a netuid that does not exist). */
  commitRevealEnabled: boolean;
  /** `SubnetworkN`: uids in use. */
  subnetworkN: number;
  /** `MaxWeightsLimit` (u16; 65535 = no limit). */
  maxWeightsLimit: number;
  /** `MinAllowedWeights` (u16). */
  minAllowedWeights: number;
  /** `WeightsVersionKey` (u64). */
  weightsVersionKey: bigint;
  /** `WeightsSetRateLimit` (u64, blocks). */
  weightsSetRateLimit: bigint;
  /** `Tempo`. */
  tempo: number;
  /** `ValidatorPermit`, by uid. */
  validatorPermit: boolean[];
  /** `LastUpdate` of the main mechanism, by uid, at `block`. */
  lastUpdate: bigint[];
  /** `LastUpdate` at `best` (never older than `lastUpdate`). */
  bestLastUpdate: bigint[];
  /** `Keys`, by uid (SS58, null for an empty slot). */
  hotkeys: (string | null)[];
  /** hotkey (SS58) -> uid. */
  uids: Map<string, number>;
  /** 0x-hex public key -> uid (SS58 prefixes differ; the key does not). */
  uidsByKey: Map<string, number>;
  /** The runtime at `block`: its spec version, epoch model and the owner's exemption. */
  runtime: RuntimeFeatures;
  /** `SubnetOwnerHotkey`'s uid at `block` (undefined when it has none on the subnet). */
  ownerUid: number | undefined;
  /**
   * The minimum-stake check of the hotkey the rules were read for (`hotkey` option): read at the
   * best head, where the pool checks it (at `at` when given). Undefined when not read.
   */
  stake: WeightsStakeRead | undefined;
}

type At = ApiDecoration<"promise">;

function entry(at: At, item: string) {
  const found = at.query["subtensorModule"]?.[item];
  if (!found) throw new Error(`the chain's runtime has no SubtensorModule.${item}`);
  return found;
}

const json = async (at: At, item: string, ...args: unknown[]): Promise<unknown> =>
  ((await entry(at, item)(...args)) as Codec).toJSON();
const big = async (at: At, item: string, ...args: unknown[]): Promise<bigint> =>
  BigInt(((await entry(at, item)(...args)) as Codec).toString());

/** The 0x-hex public key of an SS58 address or raw key; undefined when it is neither. */
export function publicKeyHex(address: string | Uint8Array): string | undefined {
  try {
    return u8aToHex(decodeAddress(address));
  } catch {
    return undefined;
  }
}

const ZERO_ACCOUNT = `0x${"00".repeat(32)}`;

/**
 * Reads a subnet's weight-setting rules at the newest finalized block (or `at`), in one bounded
 * call: hyperparameters, ValidatorPermit, LastUpdate (also at the best head), every hotkey from
 * the paged `Keys` map, the runtime's features and the owner's uid; with `hotkey`, that hotkey's
 * minimum-stake check too.
 */
export async function readSubnetRules(
  client: ChainClient,
  netuid: number,
  options: CallOptions & { at?: BlockRef; ss58Format?: number; hotkey?: string | Uint8Array } = {},
): Promise<SubnetRules> {
  const block = options.at ?? (await client.finalized(options));
  return client.call(
    `reading the rules of netuid ${netuid} at block ${block.number}`,
    async (api, connection) => {
      const bestHeader = await api.rpc.chain.getHeader();
      const best = { number: bestHeader.number.toNumber(), hash: bestHeader.hash.toHex() };
      const [at, atBest] = await Promise.all([api.at(block.hash), api.at(best.hash)]);
      const [
        exists,
        mechanismCount,
        commitRevealEnabled,
        subnetworkN,
        maxWeightsLimit,
        minAllowedWeights,
        weightsVersionKey,
        weightsSetRateLimit,
        tempo,
        validatorPermit,
        lastUpdate,
        bestLastUpdate,
      ] = await Promise.all([
        json(at, "networksAdded", netuid),
        json(at, "mechanismCountCurrent", netuid),
        json(at, "commitRevealWeightsEnabled", netuid),
        json(at, "subnetworkN", netuid),
        json(at, "maxWeightsLimit", netuid),
        json(at, "minAllowedWeights", netuid),
        big(at, "weightsVersionKey", netuid),
        big(at, "weightsSetRateLimit", netuid),
        json(at, "tempo", netuid),
        json(at, "validatorPermit", netuid),
        // LastUpdate is keyed by the netuid storage index: mecid * 4096 + netuid, mecid 0 here.
        json(at, "lastUpdate", netuid),
        json(atBest, "lastUpdate", netuid),
      ]);
      const runtime = runtimeFeatures(at);
      const ownerEntry = at.query["subtensorModule"]?.["subnetOwnerHotkey"];
      const ownerKey = ownerEntry ? u8aToHex(((await ownerEntry(netuid)) as Codec).toU8a()) : null;
      const stakeKey = options.hotkey === undefined ? undefined : publicKeyHex(options.hotkey);
      const stake =
        stakeKey === undefined
          ? undefined
          : await readWeightsStake(options.at ? at : atBest, netuid, stakeKey);
      const hotkeys = exists
        ? await readKeysAt(api, connection.provider, netuid, block.hash, options.ss58Format)
        : [];
      const uids = uidsOf(hotkeys);
      const uidsByKey = new Map<string, number>();
      for (const [hotkey, uid] of uids) {
        const key = publicKeyHex(hotkey);
        if (key) uidsByKey.set(key, uid);
      }
      const finalizedLast = (lastUpdate as (number | string)[]).map((n) => BigInt(n));
      const bestLast = (bestLastUpdate as (number | string)[]).map((n) => BigInt(n));
      return {
        netuid,
        block,
        best,
        exists: exists === true,
        mechanismCount: Number(mechanismCount),
        commitRevealEnabled: commitRevealEnabled === true,
        subnetworkN: Number(subnetworkN),
        maxWeightsLimit: Number(maxWeightsLimit),
        minAllowedWeights: Number(minAllowedWeights),
        weightsVersionKey,
        weightsSetRateLimit,
        tempo: Number(tempo),
        validatorPermit: validatorPermit as boolean[],
        lastUpdate: finalizedLast,
        // A reorg below the best head can only be newer; never let it look older than finalized.
        bestLastUpdate: finalizedLast.map((v, uid) => {
          const b = bestLast[uid];
          return b !== undefined && b > v ? b : v;
        }),
        hotkeys,
        uids,
        uidsByKey,
        runtime,
        ownerUid:
          ownerKey === null || ownerKey === ZERO_ACCOUNT ? undefined : uidsByKey.get(ownerKey),
        stake,
      };
    },
    options,
  );
}

/** A vector as `set_weights` takes it. */
export interface SetWeightsInput {
  uids: readonly number[];
  weights: readonly number[];
  versionKey: bigint;
}

/** The outcome of the local checks: pass, or the chain error the extrinsic would fail with. */
export type LocalCheck =
  | { ok: true; uid: number }
  | {
      ok: false;
      /** The SubtensorModule error name the chain would return (`SettingWeightsTooFast`, ...). */
      check: string;
      /**
       * For `SettingWeightsTooFast`, `CommittingWeightsTooFast` and `CommittedThisEpoch`: the
       * first block that may include the extrinsic.
       */
      allowedFrom?: number;
    };

/**
 * Runs `set_weights`' checks locally, in the chain's order, against `rules`, for `hotkey`
 * sending `input` in block `includedIn` (the block that would include it: best head + 1). The
 * checks are the local subtensor's own encoding of subtensor v3.3.13-393 (one source for both):
 * commit-reveal off, not the root subnet, equal lengths, subnet exists, uids within the subnet
 * size, hotkey registered, (stake: not read, assumed met), version key, rate limit, validator
 * permit, duplicates, unknown uids, minimum length, maximum weight.
 */
export function checkSetWeights(
  rules: SubnetRules,
  hotkey: string | Uint8Array,
  input: SetWeightsInput,
  includedIn: number = rules.best.number + 1,
): LocalCheck {
  const view = ruleView(rules);
  const key = decodeAddress(hotkey);
  const pool = poolStakeCheck(rules, key);
  if (pool) return pool;
  const outcome = setWeights(
    view,
    key,
    includedIn,
    rules.netuid,
    input.uids,
    input.weights,
    input.versionKey,
  );
  if (outcome.ok) return { ok: true, uid: outcome.uid };
  if (outcome.error === "SettingWeightsTooFast") {
    const uid = rules.uidsByKey.get(u8aToHex(key)) as number;
    return { ok: false, check: outcome.error, allowedFrom: allowedFrom(rules, uid) };
  }
  return { ok: false, check: outcome.error };
}

/**
 * The checks a commit's weights meet when the chain reveals them: `internal_set_weights` under
 * commit-reveal, i.e. `set_weights`' checks after its commit-reveal guard, without the rate
 * limit (the commit was rate limited instead), against `rules` as they stand (or as they stood
 * at the reveal, when `rules` were read there). A commit that fails them is dropped at reveal
 * time with no event, so it is never worth sending.
 */
export function checkRevealedWeights(
  rules: SubnetRules,
  hotkey: string | Uint8Array,
  input: SetWeightsInput,
  includedIn: number = rules.best.number + 1,
): LocalCheck {
  const view: WeightsStateView = { ...ruleView(rules), commitRevealEnabled: () => true };
  const outcome = internalSetWeights(
    view,
    decodeAddress(hotkey),
    includedIn,
    rules.netuid,
    0,
    input.uids,
    input.weights,
    input.versionKey,
  );
  return outcome.ok ? { ok: true, uid: outcome.uid } : { ok: false, check: outcome.error };
}

/** What `commit_timelocked_weights` reads besides the subnet's rules. */
export interface CommitCheckState {
  /** The chain's `CommitRevealWeightsVersion`. */
  commitRevealVersion: number;
  /** The payload version the caller encrypts (4: `WeightsTlockPayload` with the hotkey). */
  payloadVersion: number;
  /** Commits of this hotkey already in `TimelockedWeightCommits(netuid, epoch it would go to)`. */
  ownCommitsInEpoch: number;
  /** At most this many (the chain's 10). */
  maxUnrevealedCommits: number;
}

/**
 * Runs `commit_timelocked_weights`' checks locally, in the chain's order (subtensor
 * v3.3.13-393 `internal_commit_timelocked_weights`): mechanism exists, commit-reveal on,
 * `commit_reveal_version == CommitRevealWeightsVersion` (sent as read, so this fails when the
 * chain expects a payload version the caller does not encrypt), hotkey registered, the commit
 * rate limit (`LastUpdate + WeightsSetRateLimit`, a commit moves LastUpdate), fewer than 10
 * commits of the hotkey in the epoch; then the checks the weights meet when revealed
 * ({@link checkRevealedWeights}), since a commit that fails those is dropped silently later.
 */
export function checkCommitTimelocked(
  rules: SubnetRules,
  hotkey: string | Uint8Array,
  input: SetWeightsInput,
  state: CommitCheckState,
  includedIn: number = rules.best.number + 1,
): LocalCheck {
  const view = ruleView(rules);
  const key = decodeAddress(hotkey);
  const fail = (check: string, from?: number): LocalCheck =>
    from === undefined ? { ok: false, check } : { ok: false, check, allowedFrom: from };
  const pool = poolStakeCheck(rules, key);
  if (pool) return pool;
  if (!rules.exists || rules.mechanismCount <= 0) return fail("MechanismDoesNotExist");
  if (!rules.commitRevealEnabled) return fail("CommitRevealDisabled");
  if (
    state.commitRevealVersion !== state.payloadVersion ||
    state.commitRevealVersion > 0xffff ||
    state.commitRevealVersion < 0
  ) {
    return fail("IncorrectCommitRevealVersion");
  }
  const uid = rules.uidsByKey.get(u8aToHex(key));
  if (uid === undefined) return fail("HotKeyNotRegisteredInSubNet");
  if (!checkRateLimit(view, rules.netuid, rules.netuid, uid, includedIn)) {
    return fail("CommittingWeightsTooFast", allowedFrom(rules, uid));
  }
  if (state.ownCommitsInEpoch >= state.maxUnrevealedCommits) {
    return fail("TooManyUnrevealedCommits");
  }
  return checkRevealedWeights(rules, key, input, includedIn);
}

/** The first block that may include a `set_weights` from `uid` (`LastUpdate + WeightsSetRateLimit`). */
export function allowedFrom(rules: SubnetRules, uid: number): number {
  const last = rules.bestLastUpdate[uid] ?? 0n;
  if (last === 0n) return 0;
  return Number(last + rules.weightsSetRateLimit);
}

/**
 * `check_weights_min_stake`: the subnet owner's hotkey passes on a runtime that exempts it (spec
 * 401 on); otherwise its stake must reach StakeThreshold. A hotkey whose stake was not read
 * passes here (the chain still checks it).
 */
function hasMinStake(rules: SubnetRules, hotkey: Uint8Array): boolean {
  const key = u8aToHex(hotkey);
  if (!rules.stake || rules.stake.hotkey !== key) return true;
  if (rules.runtime.ownerExempt && rules.ownerUid !== undefined) {
    if (rules.uidsByKey.get(key) === rules.ownerUid) return true;
  }
  return rules.stake.meets;
}

/**
 * The pool's own check, before anything else (`SubtensorTransactionExtension`: check_weights.rs'
 * minimum stake, refused as `Custom(1)` StakeAmountTooLow): a failing stake is named first.
 */
function poolStakeCheck(rules: SubnetRules, hotkey: Uint8Array): LocalCheck | undefined {
  return hasMinStake(rules, hotkey)
    ? undefined
    : { ok: false, check: "NotEnoughStakeToSetWeights" };
}

function ruleView(rules: SubnetRules): WeightsStateView {
  return {
    commitRevealEnabled: () => rules.commitRevealEnabled,
    subnetExists: () => rules.exists,
    mechanismCount: () => rules.mechanismCount,
    subnetworkN: () => rules.subnetworkN,
    uidOf: (_netuid, hotkey) => rules.uidsByKey.get(u8aToHex(hotkey)),
    uidExists: (_netuid, uid) => (rules.hotkeys[uid] ?? null) !== null,
    hasMinStake: (hotkey) => hasMinStake(rules, hotkey),
    weightsVersionKey: () => rules.weightsVersionKey,
    lastUpdate: (_index, uid) => rules.bestLastUpdate[uid] ?? 0n,
    weightsSetRateLimit: () => rules.weightsSetRateLimit,
    validatorPermit: (_netuid, uid) => rules.validatorPermit[uid] === true,
    ownerUid: () => (rules.runtime.ownerExempt ? rules.ownerUid : undefined),
    minAllowedWeights: () => rules.minAllowedWeights,
    maxWeightsLimit: () => rules.maxWeightsLimit,
  };
}

// ---------------------------------------------------------------------------------------------
// How a snapshot becomes a vector the chain accepts (the subnet's limits policy)
//
// 1. Uids come from the validator's own read of `Keys` at a pinned finalized block, never from
//    the master's `uids`. The snapshot's `hotkeys` (each paid hotkey's fraction of the vector)
//    are matched by public key; a hotkey not on the chain is dropped, counted and logged.
// 2. What the snapshot did not pay to a hotkey (its burned share, 1 - Σ hotkeys) and the weight
//    of dropped hotkeys go to the burn uid (0). A hotkey deregistered since the master's read
//    must not raise anybody else's weight: the master's `burn` policy, applied one level down.
// 3. MaxWeightsLimit: cap-and-redistribute. The chain normalises the max-upscaled vector to sum
//    1 and refuses it if any share exceeds MaxWeightsLimit / 65535 (I32F32). We cap every share
//    at the limit and hand the excess to the uncapped uids in proportion to their weight,
//    repeating until nothing is over (a fixed point: at most one round per uid). The u16 values
//    are then checked with the chain's own arithmetic (`maxUpscaleU16` + `isMaxLimited`); if a
//    rounding unit still tips a share over, the target limit is lowered by one u16 unit and the
//    vector rebuilt, so what is sent passes exactly, not approximately. When k non-zero weights
//    cannot fit (k × limit < 1) any fix would pay uids nobody scored: we refuse
//    (`MaxWeightExceeded`, naming how many weights the limit needs) rather than invent payees.
// 4. MinAllowedWeights: pad with ZERO weights. The chain's `check_length` counts the vector's
//    length, zeros included (`WeightVecLengthIsLow` when fewer than min(MinAllowedWeights,
//    SubnetworkN)), and a zero weight pays nobody. So the vector is topped up with the lowest
//    registered uids it lacks, at weight 0: accepted by the chain, and nobody's emission changes.
//    Refusing would leave the validator unable to set weights on a subnet whose miners mostly
//    earned nothing; padding with small positive weights (what the Python SDK does) pays them.
//    A pure self-weight ([own uid]) is exempt on chain and left alone.
// 5. Values are sent max-upscaled (the largest is 65535), exactly what the chain stores: its own
//    max-upscale is then the identity, so the weights on chain equal the weights sent.
// 6. Never sent: an empty vector (`EmptyVector`), a vector whose only non-zero weight is the
//    burn uid unless `allowBurn` (`AllBurn`), or one built from a metagraph read that failed
//    (the read throws before anything is built).
// ---------------------------------------------------------------------------------------------

/** A snapshot's weights turned into a vector for one subnet (see the policy above). */
export interface BuiltWeights {
  /** Ascending uids. */
  uids: number[];
  /** u16 values, max-upscaled (the largest is 65535). */
  weights: number[];
  /** Snapshot hotkeys found on chain. */
  mapped: number;
  /** Snapshot hotkeys not on chain (or not an address), and their summed weight. */
  dropped: number;
  droppedWeight: number;
  /** Fraction of the vector on the burn uid (the snapshot's burned share plus dropped weight). */
  burnWeight: number;
  /** Uids held at MaxWeightsLimit. */
  capped: number;
  /** Zero weights added for MinAllowedWeights. */
  padded: number;
  /** Every non-zero weight is on the burn uid. */
  allBurn: boolean;
}

/** A local check stopped the submission before anything was sent (CLI exit code 3). */
export class LocalCheckError extends Error {
  override readonly name: string = "LocalCheckError";
  /** The chain error it would have been (`SettingWeightsTooFast`...), or `EmptyVector` / `AllBurn`. */
  readonly check: string;
  readonly netuid: number;
  /** For `SettingWeightsTooFast`: the first block that may include the extrinsic. */
  readonly allowedFrom: number | undefined;

  constructor(check: string, netuid: number, detail: string, allowedFrom?: number) {
    super(`${check}: ${detail}`);
    this.check = check;
    this.netuid = netuid;
    this.allowedFrom = allowedFrom;
  }
}

/** `CommitRevealWeightsEnabled` is on for the netuid: plain set_weights cannot be used. */
export class CommitRevealEnabledError extends LocalCheckError {
  override readonly name = "CommitRevealEnabledError";

  constructor(netuid: number) {
    super(
      "CommitRevealEnabled",
      netuid,
      `CommitRevealWeightsEnabled is true for netuid ${netuid}: this validator only sets weights ` +
        "directly (set_weights), which the chain refuses while commit-reveal is on",
    );
  }
}

const DETAIL: Record<string, string> = {
  CommitRevealEnabled: "commit-reveal is on for this subnet",
  CommitRevealDisabled: "commit-reveal is off for this subnet",
  IncorrectCommitRevealVersion:
    "the chain's CommitRevealWeightsVersion is not the payload version this validator encrypts",
  CommittingWeightsTooFast:
    "the rate limit (WeightsSetRateLimit) has not passed since the last commit",
  TooManyUnrevealedCommits: "10 unrevealed commits of this hotkey already wait in this epoch",
  InvalidRevealRound: "the reveal round is already stored on chain",
  CommittedThisEpoch:
    "this hotkey already has a commit for this epoch; the next one goes in the next",
  CanNotSetRootNetworkWeights: "netuid 0 is the root network",
  WeightVecNotEqualSize: "uids and weights differ in length",
  MechanismDoesNotExist: "the subnet does not exist",
  UidsLengthExceedUidsInSubNet: "more uids than the subnet has",
  HotKeyNotRegisteredInSubNet: "the validator's hotkey is not registered on this subnet",
  NotEnoughStakeToSetWeights:
    "the hotkey's stake on the subnet is below StakeThreshold (the pool refuses it as Custom(1) StakeAmountTooLow); stake more to the hotkey",
  IncorrectWeightVersionKey: "version_key is below the subnet's WeightsVersionKey",
  SettingWeightsTooFast: "the rate limit (WeightsSetRateLimit) has not passed",
  NeuronNoValidatorPermit: "the hotkey has no validator permit",
  DuplicateUids: "a uid appears twice",
  UidVecContainInvalidOne: "a uid is not registered",
  WeightVecLengthIsLow: "fewer weights than MinAllowedWeights",
  MaxWeightExceeded: "a weight is above MaxWeightsLimit",
};

/** The error a failed local check is reported with. */
export function localCheckError(check: Exclude<LocalCheck, { ok: true }>, rules: SubnetRules) {
  let detail = DETAIL[check.check] ?? "refused";
  if (check.allowedFrom !== undefined) {
    detail += ` (allowed from block ${check.allowedFrom}; best block ${rules.best.number})`;
  }
  if (check.check === "IncorrectWeightVersionKey") {
    detail += ` (${rules.weightsVersionKey})`;
  }
  if (check.check === "NotEnoughStakeToSetWeights" && rules.stake) {
    detail += ` (stake ${rules.stake.stake}, threshold ${rules.stake.threshold})`;
  }
  return new LocalCheckError(check.check, rules.netuid, detail, check.allowedFrom);
}

/**
 * Cap-and-redistribute: shares (sum 1) where none exceeds `limit`, the excess spread over the
 * uncapped entries in proportion. Requires `x.length * limit >= 1`.
 */
function capShares(x: readonly number[], limit: number): { shares: number[]; capped: boolean[] } {
  const capped = x.map(() => false);
  for (;;) {
    const cappedCount = capped.filter(Boolean).length;
    const free = 1 - cappedCount * limit;
    let freeSum = 0;
    x.forEach((v, i) => {
      if (!capped[i]) freeSum += v;
    });
    const shares = x.map((v, i) => (capped[i] ? limit : freeSum > 0 ? (v / freeSum) * free : 0));
    let changed = false;
    shares.forEach((s, i) => {
      if (!capped[i] && s > limit) {
        capped[i] = true;
        changed = true;
      }
    });
    if (!changed) return { shares, capped };
  }
}

/** Scales to u16 with the largest at 65535, as the chain stores a vector. */
function quantize(shares: readonly number[]): number[] {
  const max = Math.max(...shares);
  return shares.map((s) => (max > 0 ? Math.round((s / max) * U16_ONE) : 0));
}

/**
 * Builds the vector for `rules.netuid` from a snapshot's `hotkeys` (the policy above). Throws
 * LocalCheckError `EmptyVector` (nothing to pay) or `MaxWeightExceeded` (the limit cannot be met
 * without paying unscored uids). `allBurn` is reported, not refused: the caller decides.
 */
export function buildWeights(
  hotkeys: Readonly<Record<string, number>>,
  rules: SubnetRules,
  options: { burnUid?: number; ownUid?: number | undefined; log?: Logger } = {},
): BuiltWeights {
  const burnUid = options.burnUid ?? BURN_UID;
  const entries = Object.entries(hotkeys).filter(([, w]) => Number.isFinite(w) && w > 0);
  const total = entries.reduce((sum, [, w]) => sum + w, 0);
  // A snapshot sums to at most 1 (the rest burned); more is float drift or a foreign source.
  const scale = total > 1 ? 1 / total : 1;
  const byUid = new Map<number, number>();
  let mapped = 0;
  let dropped = 0;
  let droppedWeight = 0;
  const droppedKeys: string[] = [];
  for (const [hotkey, w] of entries) {
    const key = publicKeyHex(hotkey);
    const uid = key === undefined ? undefined : rules.uidsByKey.get(key);
    if (uid === undefined) {
      dropped += 1;
      droppedWeight += w * scale;
      if (droppedKeys.length < 10) droppedKeys.push(hotkey);
      continue;
    }
    mapped += 1;
    byUid.set(uid, (byUid.get(uid) ?? 0) + w * scale);
  }
  if (dropped > 0) {
    options.log?.warn("snapshot hotkeys not registered on the subnet were dropped", {
      netuid: rules.netuid,
      dropped,
      weight: droppedWeight,
      sample: droppedKeys,
    });
  }
  let burnWeight = Math.max(0, 1 - Math.min(total, 1)) + droppedWeight;
  if (burnWeight <= 1e-12) burnWeight = 0;
  if (burnWeight > 0) {
    if ((rules.hotkeys[burnUid] ?? null) !== null) {
      byUid.set(burnUid, (byUid.get(burnUid) ?? 0) + burnWeight);
    } else {
      options.log?.warn("the burn uid is not registered; its share is not sent", {
        netuid: rules.netuid,
        burnUid,
      });
      burnWeight = 0;
    }
  }
  const positive = [...byUid.entries()].filter(([, w]) => w > 0).sort((a, b) => a[0] - b[0]);
  if (positive.length === 0) {
    throw new LocalCheckError(
      "EmptyVector",
      rules.netuid,
      "no weight maps to a registered uid (and nothing to burn)",
    );
  }
  const uids = positive.map(([uid]) => uid);
  const sum = positive.reduce((s, [, w]) => s + w, 0);
  const shares = positive.map(([, w]) => w / sum);
  const selfOnly = uids.length === 1 && uids[0] === options.ownUid;

  let weights: number[];
  let capped = 0;
  const maxLimit = rules.maxWeightsLimit;
  if (maxLimit >= U16_ONE || selfOnly) {
    weights = quantize(shares);
  } else {
    const fits = (limit: number) => uids.length * limit >= 1 - 1e-12;
    if (!fits(maxLimit / U16_ONE)) {
      throw new LocalCheckError(
        "MaxWeightExceeded",
        rules.netuid,
        `${uids.length} non-zero weight(s) cannot each stay at or below MaxWeightsLimit ` +
          `${maxLimit}/65535; at least ${Math.ceil(U16_ONE / Math.max(maxLimit, 1))} are needed`,
      );
    }
    let found: number[] | undefined;
    for (let step = 0; step <= 64 && !found; step++) {
      const limit = (maxLimit - step) / U16_ONE;
      if (limit <= 0 || !fits(limit)) break;
      const result = capShares(shares, limit);
      const candidate = quantize(result.shares);
      if (isMaxLimited(maxUpscaleU16(candidate), maxLimit)) {
        found = candidate;
        capped = result.capped.filter(Boolean).length;
      }
    }
    if (!found) {
      throw new LocalCheckError(
        "MaxWeightExceeded",
        rules.netuid,
        `no u16 vector of ${uids.length} weight(s) meets MaxWeightsLimit ${maxLimit}/65535`,
      );
    }
    weights = found;
  }

  let padded = 0;
  const need = Math.min(rules.minAllowedWeights, rules.subnetworkN);
  if (!selfOnly && uids.length < need) {
    const present = new Set(uids);
    for (let uid = 0; uid < rules.hotkeys.length && uids.length < need; uid++) {
      if (present.has(uid) || (rules.hotkeys[uid] ?? null) === null) continue;
      uids.push(uid);
      weights.push(0);
      padded += 1;
    }
    const order = uids.map((uid, i) => [uid, weights[i] as number] as const);
    order.sort((a, b) => a[0] - b[0]);
    uids.splice(0, uids.length, ...order.map(([uid]) => uid));
    weights = order.map(([, w]) => w);
  }

  const allBurn = positive.every(([uid]) => uid === burnUid);
  return {
    uids,
    weights,
    mapped,
    dropped,
    droppedWeight,
    burnWeight: burnWeight / sum,
    capped,
    padded,
    allBurn,
  };
}
