// The chain's own set_weights checks, in the chain's order (subtensor v3.3.13-393; from v3.3.14-401
// on the subnet owner's uid needs no validator permit, see `ownerUid`): the local
// subtensor applies them to what it is sent, and the validator runs the same code before it
// sends (subnet-rules.ts), so a refusal here is the chain's refusal, by its name. chain/rules/
// holds what both sides share: these checks, the epoch arithmetic and the I32F32 fixed point.
import { isMaxLimited, maxUpscaleU16 } from "./fixed-i32f32.js";

/** What `set_weights` reads from the chain's state (the block being built). */
export interface WeightsStateView {
  commitRevealEnabled(netuid: number): boolean;
  /** `NetworksAdded`. */
  subnetExists(netuid: number): boolean;
  /** `MechanismCountCurrent` (1 unless set). */
  mechanismCount(netuid: number): number;
  /** `SubnetworkN`. */
  subnetworkN(netuid: number): number;
  /** `Uids(netuid, hotkey)`. */
  uidOf(netuid: number, hotkey: Uint8Array): number | undefined;
  /** `Keys(netuid, uid)` exists. */
  uidExists(netuid: number, uid: number): boolean;
  /** `check_weights_min_stake`. */
  hasMinStake(hotkey: Uint8Array, netuid: number): boolean;
  weightsVersionKey(netuid: number): bigint;
  /** `LastUpdate[netuidIndex][uid]`, 0 when absent. */
  lastUpdate(netuidIndex: number, uid: number): bigint;
  weightsSetRateLimit(netuid: number): bigint;
  validatorPermit(netuid: number, uid: number): boolean;
  /**
   * The subnet owner's uid (`Uids(netuid, SubnetOwnerHotkey)`) on a runtime that exempts it from
   * the validator permit (spec 401 on); undefined (or absent) on spec 393, which has no exemption.
   */
  ownerUid?(netuid: number): number | undefined;
  minAllowedWeights(netuid: number): number;
  maxWeightsLimit(netuid: number): number;
}

/** The outcome of `set_weights`: what to store, or the SubtensorModule error's name. */
export type SetWeightsOutcome =
  | {
      ok: true;
      uid: number;
      /** `mecid * 4096 + netuid`; 0 for `set_weights` is the main mechanism. */
      netuidIndex: number;
      /** `(uid, max-upscaled weight)` pairs, the value of `Weights(netuidIndex, uid)`. */
      weights: [number, number][];
      /** Whether `LastUpdate` moves (it does not while commit-reveal is on). */
      updateLastUpdate: boolean;
    }
  | { ok: false; error: string };

/**
 * `set_weights`' declared weight (dispatches.rs, call index 0): 15_540_000_000 ref time plus
 * 4,111 reads and 2 writes at RocksDbWeight (25 µs and 100 µs each). It is `Pays::No`.
 */
export const SET_WEIGHTS_REF_TIME = 15_540_000_000n + 4111n * 25_000_000n + 2n * 100_000_000n;

const GLOBAL_MAX_SUBNET_COUNT = 4096;
const ROOT_NETUID = 0;

const isSelfWeight = (uid: number, uids: readonly number[], values: readonly number[]) =>
  values.length === 1 && uids[0] === uid;

const hasDuplicates = (uids: readonly number[]) => new Set(uids).size !== uids.length;

/** `mecid · 4096 + netuid`: the key weights, LastUpdate and commits of a mechanism live under. */
export function netuidStorageIndex(netuid: number, mecid: number): number {
  return mecid * GLOBAL_MAX_SUBNET_COUNT + netuid;
}

/**
 * `check_rate_limit`, per mechanism: a neuron that never set weights (LastUpdate 0) passes;
 * otherwise `WeightsSetRateLimit` blocks must have passed since its LastUpdate (which the
 * registration block, a set_weights and a timelocked commit all move).
 */
export function checkRateLimit(
  view: WeightsStateView,
  netuid: number,
  netuidIndex: number,
  uid: number,
  currentBlock: number,
): boolean {
  if (!view.uidExists(netuid, uid)) return false;
  const last = view.lastUpdate(netuidIndex, uid);
  if (last === 0n) return true;
  const since = BigInt(currentBlock) - last;
  return (since < 0n ? 0n : since) >= view.weightsSetRateLimit(netuid);
}

/**
 * `SubtensorModule::set_weights` (call index 0) as spec 393 runs it: the dispatchable's
 * commit-reveal guard, then `internal_set_weights`' checks in their order
 * (pallets/subtensor/src/subnets/weights.rs, tag v3.3.13-393). The first failing check names
 * the error; nothing is written on failure.
 */
export function setWeights(
  view: WeightsStateView,
  hotkey: Uint8Array,
  currentBlock: number,
  netuid: number,
  uids: readonly number[],
  values: readonly number[],
  versionKey: bigint,
): SetWeightsOutcome {
  // dispatches.rs `set_weights`: refused outright while the subnet is in commit-reveal mode
  // (the storage default is on, so an unknown netuid lands here too).
  if (view.commitRevealEnabled(netuid)) return { ok: false, error: "CommitRevealEnabled" };
  return internalSetWeights(view, hotkey, currentBlock, netuid, 0, uids, values, versionKey);
}

/**
 * `internal_set_weights` (what `do_set_mechanism_weights` runs): the checks `set_weights` makes
 * after its guard, and the ones a timelocked commit meets when the chain reveals it. Under
 * commit-reveal the rate limit is skipped and LastUpdate stays (the commit moved it).
 */
export function internalSetWeights(
  view: WeightsStateView,
  hotkey: Uint8Array,
  currentBlock: number,
  netuid: number,
  mecid: number,
  uids: readonly number[],
  values: readonly number[],
  versionKey: bigint,
): SetWeightsOutcome {
  const fail = (error: string): SetWeightsOutcome => ({ ok: false, error });
  const netuidIndex = netuidStorageIndex(netuid, mecid);

  if (netuid === ROOT_NETUID) return fail("CanNotSetRootNetworkWeights");
  // 2.
  if (uids.length !== values.length) return fail("WeightVecNotEqualSize");
  // 3. ensure_mechanism_exists
  if (!view.subnetExists(netuid) || view.mechanismCount(netuid) <= mecid) {
    return fail("MechanismDoesNotExist");
  }
  // 4.
  if (uids.length > view.subnetworkN(netuid)) return fail("UidsLengthExceedUidsInSubNet");
  // 5.
  const uid = view.uidOf(netuid, hotkey);
  if (uid === undefined) return fail("HotKeyNotRegisteredInSubNet");
  // 6.
  if (!view.hasMinStake(hotkey, netuid)) return fail("NotEnoughStakeToSetWeights");
  // 7.
  const networkKey = view.weightsVersionKey(netuid);
  if (!(networkKey === 0n || versionKey >= networkKey)) return fail("IncorrectWeightVersionKey");
  // 9. Rate limit, skipped under commit-reveal.
  const commitReveal = view.commitRevealEnabled(netuid);
  if (!commitReveal && !checkRateLimit(view, netuid, netuidIndex, uid, currentBlock)) {
    return fail("SettingWeightsTooFast");
  }
  // 10. check_validator_permit: self-weight, the subnet owner's uid (spec 401 on), or a permit.
  const owner = view.ownerUid?.(netuid);
  if (!isSelfWeight(uid, uids, values) && owner !== uid && !view.validatorPermit(netuid, uid)) {
    return fail("NeuronNoValidatorPermit");
  }
  // 11.
  if (hasDuplicates(uids)) return fail("DuplicateUids");
  // 12.
  if (uids.some((u) => !view.uidExists(netuid, u))) return fail("UidVecContainInvalidOne");
  // 13. check_length: at least min(SubnetworkN, MinAllowedWeights) weights, unless self-weight.
  const minAllowed = Math.min(view.subnetworkN(netuid), view.minAllowedWeights(netuid));
  if (!isSelfWeight(uid, uids, values) && values.length < minAllowed) {
    return fail("WeightVecLengthIsLow");
  }
  // 14.
  const upscaled = maxUpscaleU16(values);
  // 15. max_weight_limited: self-weight and the u16::MAX limit always pass.
  const maxLimit = view.maxWeightsLimit(netuid);
  if (
    !isSelfWeight(uid, uids, upscaled) &&
    maxLimit !== 0xffff &&
    !isMaxLimited(upscaled, maxLimit)
  ) {
    return fail("MaxWeightExceeded");
  }
  return {
    ok: true,
    uid,
    netuidIndex,
    weights: uids.map((u, i) => [u, upscaled[i] as number]),
    updateLastUpdate: !commitReveal,
  };
}
