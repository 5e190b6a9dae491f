import type { Codec } from "@polkadot/types/types";
import type { WeightsStateView } from "../rules/set-weights-checks.js";
import { compact, readCompact, toHex, u16le, u64le } from "./_bytes.js";
import type { Runtime } from "./_runtime.js";
import { storageKey, storagePrefix } from "./_storage-key.js";
import type { DeferredValue, VersionedStore } from "./_versioned-store.js";

/** One entry of `TimelockedWeightCommits(netuid_index, epoch)`. */
export interface TimelockedCommit {
  who: Uint8Array;
  commitBlock: bigint;
  /** The TLE ciphertext as committed. */
  commit: Uint8Array;
  revealRound: bigint;
}

/** `Drand.BeaconConfig` (the pallet's `BeaconConfiguration`). */
export interface BeaconConfig {
  publicKey: Uint8Array;
  period: number;
  genesisTime: number;
  hash: Uint8Array;
  groupHash: Uint8Array;
  schemeId: string;
  beaconId: string;
}

type TupleCodec = Codec & { [index: number]: Codec & { toU8a(bare?: boolean): Uint8Array } };

/** The subnet settings `dev_setHyperparameter` may change, with their SCALE value kinds. */
export const HYPERPARAMETERS = {
  WeightsSetRateLimit: "u64",
  CommitRevealWeightsEnabled: "bool",
  MaxWeightsLimit: "u16",
  MinAllowedWeights: "u16",
  WeightsVersionKey: "u64",
  Tempo: "u16",
  RevealPeriodEpochs: "u64",
  MaxAllowedUids: "u16",
  // Plain (not per subnet): the netuid argument is ignored.
  CommitRevealWeightsVersion: "u16",
  /** The minimum stake to set weights (`check_weights_min_stake`; enforced on spec 424). */
  StakeThreshold: "u64",
  /** Epochs one block runs at most; the rest are deferred a block (spec 424 only). */
  MaxEpochsPerBlock: "u8",
} as const;

/** The hyperparameters stored once for the chain, not per subnet. */
export const PLAIN_HYPERPARAMETERS: ReadonlySet<string> = new Set([
  "CommitRevealWeightsVersion",
  "StakeThreshold",
  "MaxEpochsPerBlock",
]);

/** A name `dev_setHyperparameter` accepts. */
export type HyperparameterName = keyof typeof HYPERPARAMETERS;

/** A hyperparameter value: booleans for flags, numbers (or bigints, or decimal strings) otherwise. */
export type HyperparameterValue = boolean | number | bigint | string;

const SUBTENSOR = "SubtensorModule";

/**
 * Checks `value` against the hyperparameter's kind and returns it ready for the registry
 * (a boolean, or a decimal string so u64 values above 2^53 survive). Throws on a bad name or value.
 */
export function hyperparameterValue(name: string, value: HyperparameterValue): boolean | string {
  if (!Object.hasOwn(HYPERPARAMETERS, name)) {
    throw new Error(
      `unknown hyperparameter ${name}; one of ${Object.keys(HYPERPARAMETERS).join(", ")}`,
    );
  }
  const kind = HYPERPARAMETERS[name as HyperparameterName];
  if (kind === "bool") {
    if (typeof value !== "boolean") throw new Error(`${name} takes a boolean`);
    return value;
  }
  const text = String(value);
  if (typeof value === "boolean" || !/^\d+$/.test(text)) {
    throw new Error(`${name} takes a non-negative integer`);
  }
  const max = kind === "u8" ? 0xffn : kind === "u16" ? 0xffffn : 0xffffffffffffffffn;
  if (BigInt(text) > max) throw new Error(`${name} is a ${kind}`);
  return text;
}

/**
 * Typed reads and writes of the storage items the local chain uses, encoded with the
 * metadata's types and hashers, over the versioned store. Reads default to the open block.
 */
export class ChainState implements WeightsStateView {
  /** The runtime whose types and hashers encode the state (replaced by a runtime upgrade). */
  runtime: Runtime;
  readonly store: VersionedStore;
  // Iterating a map's keys goes through the store's sorted key list; the block step walks
  // these two every block, so the chain keeps their keys itself (every write passes here).
  readonly #subnets = new Set<number>();
  readonly #commitEpochs = new Map<number, Set<number>>();

  constructor(runtime: Runtime, store: VersionedStore) {
    this.runtime = runtime;
    this.store = store;
  }

  /** The 0x-hex storage key of `pallet.item` at `parts`. */
  key(pallet: string, item: string, parts: unknown[] = []): string {
    return toHex(storageKey(this.runtime, this.runtime.storage(pallet, item), parts));
  }

  /** The 0x-hex prefix shared by every key of `pallet.item`. */
  prefix(pallet: string, item: string): string {
    return toHex(storagePrefix(this.runtime.storage(pallet, item)));
  }

  /** The decoded value (the metadata's default when absent). */
  read<T extends Codec = Codec>(
    pallet: string,
    item: string,
    parts: unknown[] = [],
    at?: number,
  ): T {
    const entry = this.runtime.storage(pallet, item);
    const raw = this.store.get(this.key(pallet, item, parts), at);
    return this.runtime.decode<T>(entry.valueType, raw ?? entry.fallback);
  }

  /** Writes `value` (encoded as the item's value type) in the open block; `null` deletes. */
  write(pallet: string, item: string, parts: unknown[], value: unknown): void {
    const entry = this.runtime.storage(pallet, item);
    const key = this.key(pallet, item, parts);
    this.store.set(key, value === null ? null : this.runtime.encode(entry.valueType, value));
  }

  // ---- System ----

  /** `System.Account(who).nonce`. */
  nonce(who: Uint8Array, at?: number): number {
    const info = this.read<Codec & { nonce: { toNumber(): number } }>(
      "System",
      "Account",
      [who],
      at,
    );
    return info.nonce.toNumber();
  }

  /** Sets `System.Account(who).nonce` (an account here holds no balance and no providers). */
  setNonce(who: Uint8Array, nonce: number): void {
    this.write("System", "Account", [who], { nonce });
  }

  // ---- SubtensorModule, as set_weights reads it ----

  commitRevealEnabled(netuid: number): boolean {
    return this.#bool("CommitRevealWeightsEnabled", netuid);
  }
  subnetExists(netuid: number): boolean {
    return this.#bool("NetworksAdded", netuid);
  }
  mechanismCount(netuid: number): number {
    return this.#number("MechanismCountCurrent", netuid);
  }
  subnetworkN(netuid: number): number {
    return this.#number("SubnetworkN", netuid);
  }
  uidOf(netuid: number, hotkey: Uint8Array): number | undefined {
    const raw = this.store.get(this.key(SUBTENSOR, "Uids", [u16le(netuid), hotkey]));
    return raw === null ? undefined : (raw[0] as number) | ((raw[1] as number) << 8);
  }
  uidExists(netuid: number, uid: number): boolean {
    return this.store.get(this.key(SUBTENSOR, "Keys", [u16le(netuid), u16le(uid)])) !== null;
  }
  hasMinStake(hotkey: Uint8Array, netuid: number): boolean {
    // Spec 393 here models no stake: the check always passes, as it does on finney for any
    // hotkey at or above the threshold (StakeThreshold is 0 unless set).
    if (!this.runtime.counterEpochs) return true;
    // `check_weights_min_stake` (spec 424): the owner's hotkey passes whatever its stake.
    const owner = this.ownerUid(netuid);
    if (owner !== undefined && this.uidOf(netuid, hotkey) === owner) return true;
    return this.hotkeyStake(hotkey, netuid) >= this.stakeThreshold();
  }

  // ---- stake and ownership (spec 424's checks) ----

  /**
   * The hotkey's stake on the subnet: `TotalHotkeyAlpha(hotkey, netuid)`, which is what
   * `get_stake_weights_for_hotkey_on_subnet` sums for a hotkey with no parents, children nor
   * root stake (the only kind the local chain has).
   */
  hotkeyStake(hotkey: Uint8Array, netuid: number): bigint {
    const entry = this.runtime.storage(SUBTENSOR, "TotalHotkeyAlpha");
    const raw = this.store.get(this.key(SUBTENSOR, "TotalHotkeyAlpha", [hotkey, u16le(netuid)]));
    return BigInt(this.runtime.decodePrimitive(entry.valueType, raw ?? entry.fallback) as bigint);
  }
  /** Sets `TotalHotkeyAlpha(hotkey, netuid)` (0 removes it). */
  setHotkeyStake(hotkey: Uint8Array, netuid: number, stake: bigint): void {
    this.write(SUBTENSOR, "TotalHotkeyAlpha", [hotkey, u16le(netuid)], stake === 0n ? null : stake);
  }
  /** `StakeThreshold` (chain-wide; default 0). */
  stakeThreshold(): bigint {
    const entry = this.runtime.storage(SUBTENSOR, "StakeThreshold");
    const raw = this.store.get(this.key(SUBTENSOR, "StakeThreshold")) ?? entry.fallback;
    return BigInt(this.runtime.decodePrimitive(entry.valueType, raw) as bigint);
  }
  /** `SubnetOwnerHotkey(netuid)`, if set. */
  ownerHotkey(netuid: number): Uint8Array | undefined {
    const raw = this.store.get(this.key(SUBTENSOR, "SubnetOwnerHotkey", [u16le(netuid)]));
    return raw === null ? undefined : raw.slice(0, 32);
  }
  /** Sets `SubnetOwnerHotkey(netuid)`. */
  setOwnerHotkey(netuid: number, hotkey: Uint8Array): void {
    this.write(SUBTENSOR, "SubnetOwnerHotkey", [u16le(netuid)], hotkey);
  }
  /** `get_owner_uid`: the uid of `SubnetOwnerHotkey(netuid)` on the subnet, if registered. */
  ownerUid(netuid: number): number | undefined {
    const owner = this.ownerHotkey(netuid);
    return owner === undefined ? undefined : this.uidOf(netuid, owner);
  }

  // ---- the epoch counter (spec 423 on) ----

  /** `SubnetEpochIndex(netuid)`. */
  epochCounter(netuid: number): number {
    return Number(this.#bigint("SubnetEpochIndex", netuid));
  }
  /** `LastEpochBlock(netuid)`. */
  lastEpochBlock(netuid: number): number {
    return Number(this.#bigint("LastEpochBlock", netuid));
  }
  /** `PendingEpochAt(netuid)` (0: none). */
  pendingEpochAt(netuid: number): number {
    return Number(this.#bigint("PendingEpochAt", netuid));
  }
  /** `BlocksSinceLastStep(netuid)`. */
  blocksSinceLastStep(netuid: number): number {
    return Number(this.#bigint("BlocksSinceLastStep", netuid));
  }
  /** `MaxEpochsPerBlock` (default 2). */
  maxEpochsPerBlock(): number {
    const entry = this.runtime.storage(SUBTENSOR, "MaxEpochsPerBlock");
    const raw = this.store.get(this.key(SUBTENSOR, "MaxEpochsPerBlock")) ?? entry.fallback;
    return Number(this.runtime.decodePrimitive(entry.valueType, raw));
  }
  /** Writes one of the counter items (`SubnetEpochIndex`, `LastEpochBlock`, ...) of `netuid`. */
  setEpochItem(
    item: "SubnetEpochIndex" | "LastEpochBlock" | "PendingEpochAt" | "BlocksSinceLastStep",
    netuid: number,
    value: number,
  ): void {
    this.write(SUBTENSOR, item, [u16le(netuid)], value);
  }
  weightsVersionKey(netuid: number): bigint {
    return this.#bigint("WeightsVersionKey", netuid);
  }
  lastUpdate(netuidIndex: number, uid: number): bigint {
    const vec = this.#vec("LastUpdate", netuidIndex, 8);
    if (uid >= vec.count) return 0n;
    return new DataView(vec.raw.buffer, vec.raw.byteOffset).getBigUint64(vec.at + uid * 8, true);
  }
  weightsSetRateLimit(netuid: number): bigint {
    return this.#bigint("WeightsSetRateLimit", netuid);
  }
  validatorPermit(netuid: number, uid: number): boolean {
    const vec = this.#vec("ValidatorPermit", netuid, 1);
    return uid < vec.count && vec.raw[vec.at + uid] === 1;
  }
  minAllowedWeights(netuid: number): number {
    return this.#number("MinAllowedWeights", netuid);
  }
  maxWeightsLimit(netuid: number): number {
    return this.#number("MaxWeightsLimit", netuid);
  }

  /** `Tempo(netuid)`. */
  tempo(netuid: number): number {
    return this.#number("Tempo", netuid);
  }

  /** `RevealPeriodEpochs(netuid)`. */
  revealPeriod(netuid: number): number {
    return this.#number("RevealPeriodEpochs", netuid);
  }

  /** `CommitRevealWeightsVersion` (chain-wide). */
  commitRevealVersion(): number {
    const entry = this.runtime.storage(SUBTENSOR, "CommitRevealWeightsVersion");
    const raw = this.store.get(this.key(SUBTENSOR, "CommitRevealWeightsVersion")) ?? entry.fallback;
    return Number(this.runtime.decodePrimitive(entry.valueType, raw));
  }

  /** Every netuid in `NetworksAdded`, ascending (`get_all_subnet_netuids`). */
  subnets(): number[] {
    return [...this.#subnets].sort((a, b) => a - b);
  }

  // ---- SubtensorModule.TimelockedWeightCommits ----

  /** `TimelockedWeightCommits(netuidIndex, epoch)`, oldest first (empty when absent). */
  timelockedCommits(netuidIndex: number, epoch: number): TimelockedCommit[] {
    const raw = this.store.get(this.#commitsKey(netuidIndex, epoch));
    if (raw === null) return [];
    const entry = this.runtime.storage(SUBTENSOR, "TimelockedWeightCommits");
    const list = this.runtime.decode<Codec & TupleCodec[]>(entry.valueType, raw);
    return [...list].map((t) => ({
      who: t[0]!.toU8a(),
      commitBlock: BigInt(t[1]!.toString()),
      commit: t[2]!.toU8a(true),
      revealRound: BigInt(t[3]!.toString()),
    }));
  }

  /** Replaces the commits at `(netuidIndex, epoch)`; an empty list removes the entry. */
  setTimelockedCommits(netuidIndex: number, epoch: number, commits: TimelockedCommit[]): void {
    const key = this.#commitsKey(netuidIndex, epoch);
    let epochs = this.#commitEpochs.get(netuidIndex);
    if (commits.length === 0) {
      this.store.set(key, null);
      epochs?.delete(epoch);
      return;
    }
    const entry = this.runtime.storage(SUBTENSOR, "TimelockedWeightCommits");
    // Bytes from a Uint8Array would be read as already length-prefixed; hex is taken as raw.
    const value = commits.map((c) => [c.who, c.commitBlock, toHex(c.commit), c.revealRound]);
    this.store.set(key, this.runtime.encode(entry.valueType, value));
    if (!epochs) {
      epochs = new Set();
      this.#commitEpochs.set(netuidIndex, epochs);
    }
    epochs.add(epoch);
  }

  /** The epochs holding commits under `netuidIndex` (`iter_prefix(netuid_index)`), ascending. */
  timelockedCommitEpochs(netuidIndex: number): number[] {
    return [...(this.#commitEpochs.get(netuidIndex) ?? [])].sort((a, b) => a - b);
  }

  #commitsKey(netuidIndex: number, epoch: number): string {
    return this.key(SUBTENSOR, "TimelockedWeightCommits", [u16le(netuidIndex), u64le(epoch)]);
  }

  // ---- Drand ----

  /** `Drand.LastStoredRound`. */
  lastStoredRound(): bigint {
    return this.#drandRound("LastStoredRound");
  }
  /** `Drand.OldestStoredRound`. */
  oldestStoredRound(): bigint {
    return this.#drandRound("OldestStoredRound");
  }
  /** Sets `Drand.LastStoredRound`. */
  setLastStoredRound(round: bigint): void {
    this.write("Drand", "LastStoredRound", [], round);
  }
  /** Sets `Drand.OldestStoredRound`. */
  setOldestStoredRound(round: bigint): void {
    this.write("Drand", "OldestStoredRound", [], round);
  }

  /** Whether `Drand.Pulses(round)` exists (without computing its signature). */
  hasPulse(round: bigint): boolean {
    return this.store.has(this.key("Drand", "Pulses", [u64le(round)]));
  }

  /** The signature bytes of `Drand.Pulses(round)`, if the pulse is stored. */
  pulseSignature(round: bigint): Uint8Array | undefined {
    const raw = this.store.get(this.key("Drand", "Pulses", [u64le(round)]));
    if (raw === null) return undefined;
    const entry = this.runtime.storage("Drand", "Pulses");
    const pulse = this.runtime.decode<Codec & { signature: Codec }>(entry.valueType, raw);
    return pulse.signature.toU8a(true);
  }

  /** Stores `Drand.Pulses(round)`; `null` removes it. */
  setPulse(round: bigint, value: DeferredValue | null): void {
    this.store.set(this.key("Drand", "Pulses", [u64le(round)]), value);
  }

  /** `Drand.Pulses` value bytes: `{round, randomness, signature}`. */
  encodePulse(round: bigint, randomness: Uint8Array, signature: Uint8Array): Uint8Array {
    const entry = this.runtime.storage("Drand", "Pulses");
    return this.runtime.encode(entry.valueType, {
      round,
      randomness: toHex(randomness),
      signature: toHex(signature),
    });
  }

  /** Writes `Drand.BeaconConfig`. */
  setBeaconConfig(config: BeaconConfig): void {
    const text = new TextEncoder();
    // Bytes fields as hex: a Uint8Array would be read as already length-prefixed.
    this.write("Drand", "BeaconConfig", [], {
      publicKey: toHex(config.publicKey),
      period: config.period,
      genesisTime: config.genesisTime,
      hash: toHex(config.hash),
      groupHash: toHex(config.groupHash),
      schemeId: toHex(text.encode(config.schemeId)),
      metadata: { beaconId: toHex(text.encode(config.beaconId)) },
    });
  }

  #drandRound(item: string): bigint {
    const entry = this.runtime.storage("Drand", item);
    const raw = this.store.get(this.key("Drand", item)) ?? entry.fallback;
    return BigInt(this.runtime.decodePrimitive(entry.valueType, raw) as bigint);
  }

  // ---- writes ----

  /**
   * subtensor's `init_new_network` (the parts the weights path reads): the subnet exists with
   * no neurons, its tempo, 256 max uids and MinAllowedWeights 1; everything else keeps the
   * metadata's defaults unless `overrides` sets it. On a counter runtime `LastEpochBlock` starts
   * at `block - netuid % tempo` (the chain's per-netuid stagger) and `SubnetEpochIndex` at 0.
   */
  createSubnet(
    netuid: number,
    tempo: number,
    overrides: Partial<Record<HyperparameterName, HyperparameterValue>>,
    block = 0,
  ): void {
    const n = u16le(netuid);
    this.write(SUBTENSOR, "SubnetworkN", [n], 0);
    this.write(SUBTENSOR, "NetworksAdded", [n], true);
    this.#subnets.add(netuid);
    this.write(SUBTENSOR, "Tempo", [n], tempo);
    this.write(SUBTENSOR, "MaxAllowedUids", [n], 256);
    this.write(SUBTENSOR, "MinAllowedWeights", [n], 1);
    for (const [name, value] of Object.entries(overrides)) {
      if (value !== undefined) this.setHyperparameter(netuid, name, value);
    }
    if (this.runtime.counterEpochs) {
      const period = Math.max(1, this.tempo(netuid));
      this.setEpochItem("LastEpochBlock", netuid, Math.max(0, block - (netuid % period)));
    }
  }

  /**
   * The view `set_weights`' checks read (rules/set-weights-checks.ts, shared with the validator).
   * Its `ownerUid` is what exempts the subnet owner's uid from the validator permit: spec 401 on,
   * so the counter runtime has it and the spec-393 one answers none (this state's own `ownerUid`
   * must not leak into the view there).
   */
  weightsView(): WeightsStateView {
    const exemptOwner = this.runtime.counterEpochs;
    return {
      commitRevealEnabled: (netuid) => this.commitRevealEnabled(netuid),
      subnetExists: (netuid) => this.subnetExists(netuid),
      mechanismCount: (netuid) => this.mechanismCount(netuid),
      subnetworkN: (netuid) => this.subnetworkN(netuid),
      uidOf: (netuid, hotkey) => this.uidOf(netuid, hotkey),
      uidExists: (netuid, uid) => this.uidExists(netuid, uid),
      hasMinStake: (hotkey, netuid) => this.hasMinStake(hotkey, netuid),
      weightsVersionKey: (netuid) => this.weightsVersionKey(netuid),
      lastUpdate: (netuidIndex, uid) => this.lastUpdate(netuidIndex, uid),
      weightsSetRateLimit: (netuid) => this.weightsSetRateLimit(netuid),
      validatorPermit: (netuid, uid) => this.validatorPermit(netuid, uid),
      ownerUid: (netuid) => (exemptOwner ? this.ownerUid(netuid) : undefined),
      minAllowedWeights: (netuid) => this.minAllowedWeights(netuid),
      maxWeightsLimit: (netuid) => this.maxWeightsLimit(netuid),
    };
  }

  /**
   * subtensor's `append_neuron`: the next uid, `Keys`/`Uids` both ways, and the per-neuron
   * vectors grown (LastUpdate starts at the registration block, ValidatorPermit as given).
   */
  appendNeuron(
    netuid: number,
    hotkey: Uint8Array,
    validatorPermit: boolean,
    block: number,
  ): number {
    const n = u16le(netuid);
    const existing = this.uidOf(netuid, hotkey);
    if (existing !== undefined) {
      this.#setPermit(netuid, existing, validatorPermit);
      return existing;
    }
    const uid = this.subnetworkN(netuid);
    if (uid >= 0xffff) throw new Error(`subnet ${netuid} is full`);
    this.write(SUBTENSOR, "SubnetworkN", [n], uid + 1);
    if (uid + 1 > this.#number("MaxAllowedUids", netuid)) {
      // Registration past MaxAllowedUids would prune a neuron on finney; a dev chain grows instead.
      this.write(SUBTENSOR, "MaxAllowedUids", [n], uid + 1);
    }
    for (let mecid = 0; mecid < this.mechanismCount(netuid); mecid++) {
      const index = mecid * 4096 + netuid;
      this.#setAt("LastUpdate", index, uid, u64le(block), true);
    }
    this.#setPermit(netuid, uid, validatorPermit);
    this.write(SUBTENSOR, "Keys", [n, u16le(uid)], hotkey);
    this.write(SUBTENSOR, "Uids", [n, hotkey], uid);
    return uid;
  }

  /** Writes one of `HYPERPARAMETERS` (validated against its kind). */
  setHyperparameter(netuid: number, name: string, value: HyperparameterValue): void {
    const encoded = hyperparameterValue(name, value);
    if (!this.runtime.hasStorage(SUBTENSOR, name)) {
      throw new Error(`${name} is not in spec ${this.runtime.specVersion}'s storage`);
    }
    const parts = PLAIN_HYPERPARAMETERS.has(name) ? [] : [u16le(netuid)];
    this.write(SUBTENSOR, name, parts, encoded);
  }

  /** `Weights(netuidIndex, uid) = weights` and, unless under commit-reveal, `LastUpdate`. */
  storeWeights(
    netuidIndex: number,
    uid: number,
    weights: [number, number][],
    updateLastUpdate: boolean,
    block: number,
  ): void {
    if (this.runtime.hasStorage(SUBTENSOR, "Weights")) {
      this.write(SUBTENSOR, "Weights", [u16le(netuidIndex), u16le(uid)], weights);
    }
    if (updateLastUpdate) this.setLastUpdate(netuidIndex, uid, block);
  }

  /** `set_last_update_for_uid`: only an existing position moves. */
  setLastUpdate(netuidIndex: number, uid: number, block: number): void {
    this.#setAt("LastUpdate", netuidIndex, uid, u64le(block), false);
  }

  #setPermit(netuid: number, uid: number, permit: boolean): void {
    this.#setAt("ValidatorPermit", netuid, uid, new Uint8Array([permit ? 1 : 0]), true);
  }

  #primitive(item: string, netuid: number): boolean | number | bigint | Uint8Array {
    const entry = this.runtime.storage(SUBTENSOR, item);
    const raw = this.store.get(this.key(SUBTENSOR, item, [u16le(netuid)])) ?? entry.fallback;
    const value = this.runtime.decodePrimitive(entry.valueType, raw);
    if (value === undefined) throw new Error(`${item} is not a primitive`);
    return value;
  }
  #bool(item: string, netuid: number): boolean {
    return this.#primitive(item, netuid) === true;
  }
  #number(item: string, netuid: number): number {
    return Number(this.#primitive(item, netuid));
  }
  #bigint(item: string, netuid: number): bigint {
    return BigInt(this.#primitive(item, netuid) as number | bigint);
  }

  // LastUpdate (Vec<u64>) and ValidatorPermit (Vec<bool>) grow with every registration; working
  // on their SCALE bytes (fixed-size items after a compact length, as the metadata's types encode
  // them) keeps 4,096 registrations in one block to a memcpy each instead of a full decode.
  #vec(item: string, netuid: number, size: number): { raw: Uint8Array; at: number; count: number } {
    const raw = this.store.get(this.key(SUBTENSOR, item, [u16le(netuid)]));
    if (raw === null) return { raw: new Uint8Array(0), at: 0, count: 0 };
    const { value, length } = readCompact(raw, 0);
    const count = Number(value);
    if (length + count * size > raw.length) throw new Error(`${item}(${netuid}) is truncated`);
    return { raw, at: length, count };
  }

  // Sets element `index` to `item` bytes; past the end it grows (zero-filled) when `grow`, and is
  // left alone otherwise (subtensor's set_last_update_for_uid ignores a missing position).
  #setAt(name: string, netuid: number, index: number, item: Uint8Array, grow: boolean): void {
    const size = item.length;
    const vec = this.#vec(name, netuid, size);
    if (index >= vec.count && !grow) return;
    const count = Math.max(vec.count, index + 1);
    const head = compact(count);
    const out = new Uint8Array(head.length + count * size);
    out.set(head, 0);
    out.set(vec.raw.subarray(vec.at, vec.at + vec.count * size), head.length);
    out.set(item, head.length + index * size);
    this.store.set(this.key(SUBTENSOR, name, [u16le(netuid)]), out);
  }
}
