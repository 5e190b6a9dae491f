import { randomBytes } from "node:crypto";
import { createLogger, type Logger } from "@platform/core";
import type { Codec } from "@polkadot/types/types";
import { checkRateLimit, SET_WEIGHTS_REF_TIME, setWeights } from "../rules/set-weights-checks.js";
import {
  blake2_256,
  bytesEqual,
  compact,
  fromHex,
  hexNumber,
  toHex,
  u32le,
  u64le,
} from "./_bytes.js";
import {
  ChainState,
  type HyperparameterName,
  type HyperparameterValue,
  hyperparameterValue,
} from "./_chain-state.js";
import {
  ingestPulses,
  type PulseWorker,
  pulseWorker,
  roundsToFetch,
  writeBeaconConfig,
  writePulseExtrinsic,
  writePulses,
} from "./_drand-pallet.js";
import { type EpochEvent, migrateToCounter, runEpochs } from "./_epoch-schedule.js";
import {
  bareExtrinsic,
  type DecodedExtrinsic,
  decodeExtrinsic,
  ExtrinsicFormatError,
  eraBirth,
  eraDeath,
  signingPayload,
  verifyExtrinsicSignature,
} from "./_extrinsic.js";
import { LocalBeacon } from "./_local-beacon.js";
import {
  alreadyImported,
  badFormat,
  CUSTOM_TRANSACTION_ERROR,
  immediatelyDropped,
  invalidTransaction,
  namedPoolError,
  type PoolError,
  tooLowPriority,
  unknownTransaction,
} from "./_pool-error.js";
import { concatBytes, type ModuleErrorIndex, type Runtime } from "./_runtime.js";
import {
  COMMIT_TIMELOCKED_REF_TIME,
  commitTimelockedWeights,
  MAX_COMMIT_BYTES,
  type RevealEvent,
  revealTimelockedCommits,
} from "./_timelocked-commits.js";
import { VersionedStore } from "./_versioned-store.js";

/** A transaction's progress, as `author_extrinsicUpdate` reports it. */
export type TxStatus =
  | "future"
  | "ready"
  | { inBlock: string }
  | { finalized: string }
  | "invalid"
  | "dropped";

/** A header's fields (hashes as 0x-hex). The digest is always empty. */
export interface BlockHeader {
  parentHash: string;
  number: number;
  stateRoot: string;
  extrinsicsRoot: string;
}

/** One produced block. */
export interface BlockRecord {
  number: number;
  hash: string;
  header: BlockHeader;
  /** 0x-hex extrinsics with their length prefixes; null once pruned from history. */
  extrinsics: string[] | null;
  /** Pool transactions it included (dropped once finalized). */
  included: PoolTx[];
}

/** An extrinsic of a block body: its hex, or how to build it when the body is first read. */
type BodyItem = string | { digest: Uint8Array; build: () => string };

// A write_pulse carries a BLS signature (~20 ms to compute); the body builds it only when read.
class Block implements BlockRecord {
  included: PoolTx[] = [];
  #body: BodyItem[] | null;

  constructor(
    readonly number: number,
    readonly hash: string,
    readonly header: BlockHeader,
    body: BodyItem[],
  ) {
    this.#body = body;
  }

  get extrinsics(): string[] | null {
    if (this.#body === null) return null;
    const built = this.#body.map((e) => (typeof e === "string" ? e : e.build()));
    this.#body = built;
    return built;
  }

  set extrinsics(value: string[] | null) {
    this.#body = value;
  }
}

/** A transaction waiting in, or included from, the pool. */
export interface PoolTx {
  ex: DecodedExtrinsic;
  who: Uint8Array;
  nonce: number;
  /** The first block the transaction's era no longer allows. */
  death: number;
  /** A `reject_next` module error to fail its dispatch with. */
  forced?: ModuleErrorIndex;
  watch?: (status: TxStatus) => void;
  readyAnnounced: boolean;
}

/** Options of the chain itself (no networking). */
export interface LocalChainOptions {
  runtime: Runtime;
  finalityLag: number;
  /** Blocks of state and bodies kept readable. */
  historyBlocks: number;
  /** Tempo of subnets created by `registerNeuron`. */
  tempo: number;
  /** Hyperparameters written when a subnet is created (finney-like defaults otherwise). */
  subnetDefaults: Partial<Record<HyperparameterName, HyperparameterValue>>;
  /** Makes the genesis hash deterministic; random when omitted. */
  genesisSeed?: Uint8Array | undefined;
  /** Transactions the pool holds at most. */
  poolLimit: number;
  /** `AuraApi_slot_duration`, in ms (how often the server produces a block). */
  blockMs: number;
  /**
   * Simulated ms per block: `Timestamp.Now` of block n is the genesis timestamp plus n times
   * this, and the drand beacon's rounds follow that clock. Default 12,000 (finney's block time).
   */
  simulatedBlockMs?: number | undefined;
  /** `Timestamp.Now` of the genesis block, Unix ms; default the wall clock at construction. */
  genesisTimestamp?: number | undefined;
  /** The chain's drand beacon; default one keyed from `genesisSeed` (random without one). */
  beacon?: LocalBeacon | undefined;
  /** Where dropped and expired commits are logged (finney only logs them); default silent. */
  log?: Logger | undefined;
}

/** The calls the pool accepts: both free (`Pays::No`) and signed by the hotkey. */
const CALL_REF_TIME: Record<string, bigint> = {
  set_weights: SET_WEIGHTS_REF_TIME,
  commit_timelocked_weights: COMMIT_TIMELOCKED_REF_TIME,
};

/** The declared ref time of a call the local chain runs; undefined for any other call. */
export function callRefTime(pallet: string, method: string): bigint | undefined {
  return pallet === "SubtensorModule" && Object.hasOwn(CALL_REF_TIME, method)
    ? CALL_REF_TIME[method]
    : undefined;
}

/** A read at a block the chain does not know, or no longer keeps state for. */
export class UnknownBlockError extends Error {
  override readonly name = "UnknownBlockError";
}

// Timestamp.set, an inherent: mandatory, its weight as the runtime benchmarks it (approximately).
const TIMESTAMP_WEIGHT = 9_000_000n;
// Drand.write_pulse's declared weight (approximately, as benchmarked).
const WRITE_PULSE_WEIGHT = 4_294_000_000n;
const EMPTY_TRIE_ROOT = "0x03170a2e7597b7b7e3d84c05391d139a62b157e78786d8c082f29dcf4c111314";

interface DevOp {
  apply(state: ChainState, block: number): unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * The local subtensor's chain: state, transaction pool and block production (one block per
 * `produceBlock` call; the server's timer calls it). Only `SubtensorModule.set_weights` and
 * `commit_timelocked_weights` run; every other call is refused at the pool, as finney refuses a
 * fee-paying call from an account with no balance. Each block reveals the timelocked commits
 * due (SubtensorModule's on_initialize), runs the epoch schedule on a counter runtime, and
 * stores the drand pulses its own beacon published: by the block's simulated time on spec 393,
 * by the parent's through unsigned `write_pulse` extrinsics on spec 424.
 */
export class LocalChain {
  readonly store: VersionedStore;
  readonly state: ChainState;
  readonly genesisHash: string;
  /** The chain's drand beacon (its pulses land in `Drand.Pulses`). */
  readonly beacon: LocalBeacon;
  /** `Timestamp.Now` of the genesis block; block n's is this plus n · `simulatedBlockMs`. */
  readonly genesisTimestamp: number;
  readonly simulatedBlockMs: number;
  readonly #options: LocalChainOptions;
  readonly #log: Logger;
  // Indexed by number; headers older than both the state history and System.BlockHash are
  // forgotten (left undefined) so a long run at 250 ms blocks stays small.
  readonly #blocks: (BlockRecord | undefined)[] = [];
  readonly #byHash = new Map<string, number>();
  readonly #pool: PoolTx[] = [];
  readonly #dev: DevOp[] = [];
  readonly #headListeners = new Set<(block: BlockRecord) => void>();
  readonly #finalizedListeners = new Set<(block: BlockRecord) => void>();
  readonly #blockHashCount: number;
  #finalized = 0;
  #rejectNext: string | undefined;
  // The runtime each block's state holds, from the block that set it on (a dev upgrade appends
  // one; the block after that runs it).
  readonly #runtimes: { from: number; runtime: Runtime }[] = [];
  #upgradeTo: Runtime | undefined;
  // Dev faults on the counter model: epochs still to defer or skip, per netuid.
  readonly #deferrals = new Map<number, number>();
  readonly #skips = new Map<number, number>();
  readonly #worker: PulseWorker;

  constructor(options: LocalChainOptions) {
    this.#options = options;
    this.#runtimes.push({ from: 0, runtime: options.runtime });
    this.store = new VersionedStore(options.historyBlocks);
    this.state = new ChainState(options.runtime, this.store);
    const count = options.runtime.constant("System", "BlockHashCount");
    this.#blockHashCount = new DataView(count.buffer, count.byteOffset, 4).getUint32(0, true);

    const seed = options.genesisSeed ?? new Uint8Array(randomBytes(32));
    const header: BlockHeader = {
      parentHash: toHex(new Uint8Array(32)),
      number: 0,
      stateRoot: toHex(
        blake2_256(concatBytes([new TextEncoder().encode("local-subtensor"), seed])),
      ),
      extrinsicsRoot: EMPTY_TRIE_ROOT,
    };
    const genesis = this.#record(header, []);
    this.genesisHash = genesis.hash;
    this.#worker = pulseWorker(seed);
    this.store.begin(0);
    this.state.write("System", "Number", [], 0);
    this.#writeLastRuntimeUpgrade();
    this.state.write("System", "BlockHash", [0], fromHex(genesis.hash));
    this.state.write("System", "Events", [], []);
    this.simulatedBlockMs = options.simulatedBlockMs ?? 12_000;
    this.genesisTimestamp = options.genesisTimestamp ?? Date.now();
    this.state.write("Timestamp", "Now", [], this.genesisTimestamp);
    this.#log = options.log ?? createLogger({ name: "local-subtensor", write: () => {} });
    // Keyed from the genesis seed: a deterministic chain has a deterministic beacon.
    this.beacon = options.beacon ?? new LocalBeacon({ seed });
    writeBeaconConfig(this.state, this.beacon);
    ingestPulses(this.state, this.beacon, this.genesisTimestamp);
  }

  /**
   * The runtime in the best block's state (its `:code`): what a transaction submitted now is
   * checked against, and what the node serves without a block hash.
   */
  get runtime(): Runtime {
    return this.runtimeAt(this.head().number);
  }

  /**
   * The runtime in block `n`'s state, what `state_getRuntimeVersion` and `state_getMetadata` at
   * `n` answer. As on a substrate chain, block `n + 1` runs it: a runtime set in block `n` first
   * executes (and migrates) in the block after.
   */
  runtimeAt(n: number): Runtime {
    for (let i = this.#runtimes.length - 1; i > 0; i--) {
      const entry = this.#runtimes[i] as { from: number; runtime: Runtime };
      if (n >= entry.from) return entry.runtime;
    }
    return (this.#runtimes[0] as { runtime: Runtime }).runtime;
  }

  /**
   * `dev_upgradeRuntime`, as a `set_code` would: the next block's state holds `runtime`
   * (clients following the runtime version see it with that block), and the block after runs
   * it: `System.LastRuntimeUpgrade` and, from spec 393 to a counter runtime,
   * `migrate_dynamic_tempo` (the counter seeded with the formula's epoch). Resolves with the
   * number of the block whose state holds the new runtime.
   */
  upgradeRuntime(runtime: Runtime): Promise<number> {
    const latest = (this.#runtimes[this.#runtimes.length - 1] as { runtime: Runtime }).runtime;
    const pending = this.#upgradeTo ?? latest;
    if (runtime.specVersion <= pending.specVersion) {
      return Promise.reject(
        new Error(`spec ${runtime.specVersion} is not newer than spec ${pending.specVersion}`),
      );
    }
    this.#upgradeTo = runtime;
    return this.queueDev((_state, block) => {
      this.#upgradeTo = undefined;
      this.#runtimes.push({ from: block, runtime });
      return block;
    });
  }

  // Starts block `n` on the runtime its parent's state holds: after a new one, the migration
  // and the version record (frame_executive's on_runtime_upgrade).
  #enterRuntime(n: number): void {
    const next = this.runtimeAt(n - 1);
    const previous = this.state.runtime;
    if (next === previous) return;
    this.state.runtime = next;
    if (!previous.counterEpochs && next.counterEpochs) migrateToCounter(this.state, n);
    this.#writeLastRuntimeUpgrade();
    this.#log.warn("dev: runtime upgraded", {
      block: n,
      from: previous.specVersion,
      to: next.specVersion,
    });
  }

  #writeLastRuntimeUpgrade(): void {
    this.state.write("System", "LastRuntimeUpgrade", [], {
      specVersion: this.state.runtime.specVersion,
      specName: this.state.runtime.specName,
    });
  }

  /** `dev_deferEpoch`: the next `times` due epochs of `netuid` are each deferred a block. */
  deferEpoch(netuid: number, times = 1): void {
    this.#requireCounter("deferring an epoch");
    this.#deferrals.set(netuid, (this.#deferrals.get(netuid) ?? 0) + times);
  }

  /** `dev_skipEpoch`: the next `times` due epochs of `netuid` are skipped (`EpochSkipped`). */
  skipEpoch(netuid: number, times = 1): void {
    this.#requireCounter("skipping an epoch");
    this.#skips.set(netuid, (this.#skips.get(netuid) ?? 0) + times);
  }

  /** `dev_triggerEpoch`: `PendingEpochAt(netuid) = at` (default the next block). */
  triggerEpoch(netuid: number, at?: number): Promise<number> {
    this.#requireCounter("triggering an epoch");
    return this.queueDev((state, block) => {
      const fireAt = at ?? block + 1;
      state.setEpochItem("PendingEpochAt", netuid, fireAt);
      return fireAt;
    });
  }

  /** `dev_setStake`: the hotkey's stake on `netuid` (`TotalHotkeyAlpha`), in rao. */
  setStake(netuid: number, hotkey: Uint8Array, stake: bigint): Promise<void> {
    return this.queueDev((state) => state.setHotkeyStake(hotkey, netuid, stake));
  }

  /** `dev_setSubnetOwner`: `SubnetOwnerHotkey(netuid) = hotkey`. */
  setSubnetOwner(netuid: number, hotkey: Uint8Array): Promise<void> {
    return this.queueDev((state) => state.setOwnerHotkey(netuid, hotkey));
  }

  #requireCounter(what: string): void {
    if (!this.runtime.counterEpochs) {
      throw new Error(`${what} needs the epoch counter (spec 424); this chain runs spec 393`);
    }
  }

  #take(faults: Map<number, number>, netuid: number): boolean {
    const left = faults.get(netuid) ?? 0;
    if (left <= 0) return false;
    if (left === 1) faults.delete(netuid);
    else faults.set(netuid, left - 1);
    return true;
  }

  /** `Timestamp.Now` of block `n` (simulated: blocks × `simulatedBlockMs` after genesis). */
  timestampOf(n: number): number {
    return this.genesisTimestamp + n * this.simulatedBlockMs;
  }

  /**
   * `dev_skipDrandRound`: the beacon never publishes `round` (default: the next round not yet
   * stored nor skipped), so commits locked to it never reveal. Returns the round.
   */
  skipDrandRound(round?: bigint): bigint {
    const stored = this.state.lastStoredRound();
    let target = round;
    if (target === undefined) {
      target = stored + 1n;
      while (this.beacon.isSkipped(target)) target += 1n;
    } else if (target <= stored) {
      throw new Error(`round ${target} is already stored (LastStoredRound ${stored})`);
    }
    this.beacon.skip(target);
    this.#log.warn("dev: drand round skipped", { round: target.toString() });
    return target;
  }

  /** The best (newest) block. */
  head(): BlockRecord {
    return this.#blocks[this.#blocks.length - 1] as BlockRecord;
  }

  /** The newest finalized block. */
  finalized(): BlockRecord {
    return this.#blocks[this.#finalized] as BlockRecord;
  }

  /** Block `n`, if produced. */
  block(n: number): BlockRecord | undefined {
    return this.#blocks[n];
  }

  /** The block with this 0x-hex hash, if any. */
  blockByHash(hash: string): BlockRecord | undefined {
    const n = this.#byHash.get(hash.toLowerCase());
    return n === undefined ? undefined : this.#blocks[n];
  }

  /** The block number whose state a read `at` the given hash sees (default: best). */
  stateAt(hash?: string | null): number {
    if (hash === undefined || hash === null) return this.head().number;
    const block = this.blockByHash(hash);
    if (!block || block.number < this.head().number - this.#options.historyBlocks) {
      throw new UnknownBlockError(`State already discarded for ${hash}`);
    }
    return block.number;
  }

  /** Transactions in the pool, in submission order. */
  pending(): readonly PoolTx[] {
    return this.#pool;
  }

  /** The account's next nonce counting its pooled transactions (`system_accountNextIndex`). */
  nextIndex(who: Uint8Array): number {
    let next = this.state.nonce(who);
    const mine = new Set(this.#pool.filter((t) => bytesEqual(t.who, who)).map((t) => t.nonce));
    while (mine.has(next)) next += 1;
    return next;
  }

  /** Calls `listener` with every new best block. */
  onNewHead(listener: (block: BlockRecord) => void): () => void {
    this.#headListeners.add(listener);
    return () => this.#headListeners.delete(listener);
  }

  /** Calls `listener` with every newly finalized block, in order. */
  onFinalized(listener: (block: BlockRecord) => void): () => void {
    this.#finalizedListeners.add(listener);
    return () => this.#finalizedListeners.delete(listener);
  }

  /** The next submitted extrinsic is refused (pool error name) or fails (module error name). */
  rejectNext(error: string): void {
    if (!namedPoolError(error) && !this.runtime.moduleError(error)) {
      throw new Error(`${error} is neither an InvalidTransaction variant nor a module error`);
    }
    this.#rejectNext = error;
  }

  /**
   * Runs `apply` against the state at the start of the next block; resolves with its result
   * once that block is produced (so the caller then sees it at the best block).
   */
  queueDev<T>(apply: (state: ChainState, block: number) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#dev.push({ apply, resolve: (v) => resolve(v as T), reject });
    });
  }

  /** `dev_registerNeuron`: creates the subnet on first use; resolves with the uid. */
  registerNeuron(netuid: number, hotkey: Uint8Array, validatorPermit: boolean): Promise<number> {
    if (!Number.isInteger(netuid) || netuid < 1 || netuid > 4095) {
      return Promise.reject(new Error("netuid must be an integer in 1..4095"));
    }
    if (hotkey.length !== 32) return Promise.reject(new Error("hotkey must be 32 bytes"));
    return this.queueDev((state, block) => {
      if (!state.subnetExists(netuid)) {
        state.createSubnet(netuid, this.#options.tempo, this.#options.subnetDefaults, block);
      }
      return state.appendNeuron(netuid, hotkey, validatorPermit, block);
    });
  }

  /** `dev_setHyperparameter`: writes the item (it does not create the subnet). */
  setHyperparameter(netuid: number, name: string, value: HyperparameterValue): Promise<void> {
    if (!Number.isInteger(netuid) || netuid < 0 || netuid > 0xffff) {
      return Promise.reject(new Error("netuid must be a u16"));
    }
    // Validate now so a bad name or value fails the call, not the block.
    try {
      hyperparameterValue(name, value);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.queueDev((state, block) => {
      state.setHyperparameter(netuid, name, value);
      // sudo_set_tempo on a counter runtime restarts the cycle (`apply_tempo_with_cycle_reset`).
      if (name === "Tempo" && state.runtime.counterEpochs) {
        state.setEpochItem("LastEpochBlock", netuid, block);
      }
    });
  }

  /**
   * Validates `bytes` as the pool does at the best block and queues it. Throws `PoolError`
   * (1001, 1010, 1011, 1013, 1014, 1016) on refusal; `watch` then receives its statuses.
   * Future nonces wait in the pool (status "future") until the gap closes or their era ends.
   */
  submit(bytes: Uint8Array, watch?: (status: TxStatus) => void): PoolTx {
    const reject = this.#rejectNext;
    this.#rejectNext = undefined;
    const injected = reject === undefined ? undefined : namedPoolError(reject);
    if (injected) throw injected;
    const tx = this.#validate(bytes);
    if (reject !== undefined) tx.forced = this.runtime.moduleError(reject);
    if (this.#pool.some((t) => t.ex.hash === tx.ex.hash)) throw alreadyImported(tx.ex.hash);
    if (this.#pool.some((t) => t.nonce === tx.nonce && bytesEqual(t.who, tx.who))) {
      throw tooLowPriority();
    }
    if (this.#pool.length >= this.#options.poolLimit) throw immediatelyDropped();
    if (watch) tx.watch = watch;
    this.#pool.push(tx);
    tx.readyAnnounced = this.#isReady(tx);
    watch?.(tx.readyAnnounced ? "ready" : "future");
    // Filling a nonce gap promotes the sender's waiting transactions now, not at the next block.
    if (tx.readyAnnounced) this.#announceReady();
    return tx;
  }

  #announceReady(): void {
    for (const t of this.#pool) {
      if (!t.readyAnnounced && this.#isReady(t)) {
        t.readyAnnounced = true;
        t.watch?.("ready");
      }
    }
  }

  // Ready once every nonce between the account's and this one is in the pool (the pool's
  // requires/provides tags); otherwise it waits as "future".
  #isReady(tx: PoolTx): boolean {
    const nonces = new Set(this.#pool.filter((t) => bytesEqual(t.who, tx.who)).map((t) => t.nonce));
    for (let n = this.state.nonce(tx.who); n < tx.nonce; n++) if (!nonces.has(n)) return false;
    return true;
  }

  #validate(bytes: Uint8Array): PoolTx {
    let ex: DecodedExtrinsic;
    try {
      ex = decodeExtrinsic(this.runtime, bytes);
    } catch (error) {
      if (error instanceof ExtrinsicFormatError) throw badFormat(error.message);
      throw error;
    }
    // `commit` is a BoundedVec<u8, 5000>: a longer one does not decode as this runtime's call.
    if (ex.pallet === "SubtensorModule" && ex.method === "commit_timelocked_weights") {
      if (commitArgs(ex).commit.length > MAX_COMMIT_BYTES) {
        throw badFormat(`commit is longer than ${MAX_COMMIT_BYTES} bytes`);
      }
    }
    if (!ex.signed) throw unknownTransaction("NoUnsignedValidator");
    if (ex.signer?.kind !== "Id") throw unknownTransaction("CannotLookup");
    const who = ex.signer.accountId;
    // The pool validates against a block built on the best one.
    const current = this.head().number + 1;
    // CheckMortality's implicit data: the birth block's hash must still be in System.BlockHash.
    const birth = eraBirth(ex.era, current);
    const birthBlock = this.#blocks[birth];
    // After block h, System.BlockHash holds h - BlockHashCount ..= h (and the genesis).
    const kept = birth === 0 || birth + this.#blockHashCount + 1 >= current;
    if (!birthBlock || birth >= current || !kept) throw invalidTransaction("AncientBirthBlock");
    const payload = signingPayload(this.runtime, ex, {
      specVersion: this.runtime.specVersion,
      transactionVersion: this.runtime.transactionVersion,
      genesisHash: fromHex(this.genesisHash),
      birthHash: fromHex(ex.era.mortal ? birthBlock.hash : this.genesisHash),
    });
    if (!verifyExtrinsicSignature(ex, payload)) throw invalidTransaction("BadProof");
    if (who.every((b) => b === 0)) throw invalidTransaction("BadSigner");
    // CheckNonce: a fee-paying call from an account with no providers cannot pay. Here only
    // set_weights and commit_timelocked_weights are free (Pays::No) and no account holds a balance.
    const freeCall = callRefTime(ex.pallet, ex.method) !== undefined;
    if (!freeCall) throw invalidTransaction("Payment");
    if (ex.nonce < this.state.nonce(who)) throw invalidTransaction("Stale");
    // ChargeTransactionPayment: a tip needs a balance.
    if (ex.tip > 0n) throw invalidTransaction("Payment");
    const refused = this.#extensionRefusal(ex, who, current);
    if (refused) throw refused;
    return { ex, who, nonce: ex.nonce, death: eraDeath(ex.era, current), readyAnnounced: false };
  }

  /**
   * SubtensorTransactionExtension's `validate` for the weights calls, checked at the pool and
   * again when a block includes the transaction (`guards/check_weights.rs`, then
   * `guards/check_rate_limits.rs`): on a counter runtime (spec 424) a stake below the threshold
   * is `Custom(1)` and a `set_weights` inside the rate limit `Custom(6)`; on every runtime a
   * commit to a drand round already stored is `Custom(15)`. The commit's own rate limit stays a
   * dispatch error (`CommittingWeightsTooFast`), as on the chain.
   */
  #extensionRefusal(ex: DecodedExtrinsic, who: Uint8Array, block: number): PoolError | undefined {
    if (ex.pallet !== "SubtensorModule") return undefined;
    const commit = ex.method === "commit_timelocked_weights" ? commitArgs(ex) : undefined;
    const netuid = commit?.netuid ?? Number((ex.call.args[0] as Codec).toString());
    const state = this.state;
    const counter = this.runtime.counterEpochs;
    if (counter && !state.hasMinStake(who, netuid)) {
      return invalidTransaction({ custom: CUSTOM_TRANSACTION_ERROR.StakeAmountTooLow });
    }
    if (commit && commit.revealRound < state.lastStoredRound()) {
      return invalidTransaction({ custom: CUSTOM_TRANSACTION_ERROR.InvalidRevealRound });
    }
    if (counter && ex.method === "set_weights" && !state.commitRevealEnabled(netuid)) {
      const uid = state.uidOf(netuid, who);
      // An unregistered hotkey passes here and fails at dispatch.
      if (uid !== undefined && !checkRateLimit(state, netuid, netuid, uid, block)) {
        return invalidTransaction({ custom: CUSTOM_TRANSACTION_ERROR.RateLimitExceeded });
      }
    }
    return undefined;
  }

  /** Builds, imports and announces the next block; finalizes `finalityLag` behind it. */
  produceBlock(): BlockRecord {
    const parent = this.head();
    const n = parent.number + 1;
    const state = this.state;
    this.store.begin(n);
    state.write("System", "Number", [], n);
    state.write("System", "ParentHash", [], fromHex(parent.hash));
    state.write("System", "BlockHash", [n - 1], fromHex(parent.hash));
    const stale = n - this.#blockHashCount - 1;
    if (stale > 0) state.write("System", "BlockHash", [stale], null);
    this.#enterRuntime(n);

    // on_initialize: SubtensorModule's block step reveals the commits due, with the pulses
    // stored up to the parent block (a pulse stored in this block serves from the next one).
    const events: Uint8Array[] = revealTimelockedCommits(
      state,
      n,
      (round) => state.pulseSignature(round),
      this.#log,
    ).map((e) => this.#revealEvent(e));
    // run_coinbase's epoch schedule (counter runtimes), after the reveals.
    const epochFaults = {
      takeDeferral: (netuid: number) => this.#take(this.#deferrals, netuid),
      takeSkip: (netuid: number) => this.#take(this.#skips, netuid),
    };
    for (const e of runEpochs(state, n, epochFaults)) events.push(this.#epochEvent(e));
    const timestamp = this.timestampOf(n);
    const counter = this.state.runtime.counterEpochs;
    // Spec 393 here: pulses stored in the initialization phase, after the reveals, with the
    // rounds published by this block's time.
    const rounds = counter ? [] : ingestPulses(state, this.beacon, timestamp);
    if (rounds.length > 0) {
      events.push(this.#event(INITIALIZATION, "Drand", "NewPulse", [rounds.map(String)]));
    }

    // The dev_ methods act as a sudo extrinsic of this block would: after its initialization
    // (the reveals and the epoch above saw the parent's state), so a block's reveal step never
    // sees a change that the state after its parent does not show (what a validator reads).
    const ops = this.#dev.splice(0);
    const results = ops.map((op) => {
      try {
        return { ok: true as const, value: op.apply(state, n) };
      } catch (error) {
        return { ok: false as const, error };
      }
    });

    state.write("Timestamp", "Now", [], timestamp);
    const [tsPallet, tsCall] = this.state.runtime.callIndex("Timestamp", "set");
    const body: BodyItem[] = [
      toHex(bareExtrinsic(concatBytes([new Uint8Array([tsPallet, tsCall]), compact(timestamp)]))),
    ];
    events.push(
      this.#event(0, "System", "ExtrinsicSuccess", [
        dispatchInfo(TIMESTAMP_WEIGHT, "Mandatory", "Yes"),
      ]),
    );
    // Spec 424: the offchain worker that ran after the parent block fetched the rounds
    // published by then and sent one unsigned write_pulse each; this block includes them first
    // (DrandPriority), so a reveal sees them from the next block on.
    if (counter) this.#includePulses(n, body, events);

    const included: PoolTx[] = [];
    const dropped: PoolTx[] = [];
    for (let progress = true; progress; ) {
      progress = false;
      for (const tx of [...this.#pool]) {
        const expected = state.nonce(tx.who);
        if (n >= tx.death || tx.nonce < expected) {
          this.#remove(tx);
          dropped.push(tx);
          continue;
        }
        if (tx.nonce > expected) continue;
        // Validity is checked again when the block includes it (this block's pulses, stake and
        // rate limit).
        if (this.#extensionRefusal(tx.ex, tx.who, n)) {
          this.#remove(tx);
          dropped.push(tx);
          continue;
        }
        this.#remove(tx);
        events.push(...this.#apply(tx, body.length, n));
        body.push(toHex(tx.ex.bytes));
        included.push(tx);
        progress = true;
      }
    }
    this.store.set(state.key("System", "Events"), concatBytes([compact(events.length), ...events]));
    state.write("System", "EventCount", [], events.length);

    const header: BlockHeader = {
      parentHash: parent.hash,
      number: n,
      stateRoot: toHex(
        blake2_256(concatBytes([fromHex(parent.header.stateRoot), this.store.writesDigest()])),
      ),
      // Not a trie root: a digest of the extrinsics (clients do not check it), a write_pulse
      // standing in by its round so its signature is only computed when the body is read.
      extrinsicsRoot: toHex(
        blake2_256(
          concatBytes([
            compact(body.length),
            ...body.map((e) => (typeof e === "string" ? fromHex(e) : e.digest)),
          ]),
        ),
      ),
    };
    const block = this.#record(header, body);
    block.included = included;

    const pruned = this.#blocks[n - this.#options.historyBlocks - 1];
    if (pruned) {
      pruned.extrinsics = null;
      pruned.included = [];
    }
    const forgotten = n - Math.max(this.#options.historyBlocks, this.#blockHashCount) - 2;
    const old = forgotten > 0 ? this.#blocks[forgotten] : undefined;
    if (old) {
      this.#byHash.delete(old.hash);
      this.#blocks[forgotten] = undefined;
    }

    for (const tx of dropped) tx.watch?.("invalid");
    // A new runtime in this block's state: what the pool holds is checked against it.
    if (this.runtimeAt(n) !== this.runtimeAt(n - 1)) this.#revalidatePool();
    for (const listener of this.#headListeners) listener(block);
    for (const tx of included) tx.watch?.({ inBlock: block.hash });
    this.#announceReady();
    results.forEach((r, i) => {
      const op = ops[i] as DevOp;
      if (r.ok) op.resolve(r.value);
      else op.reject(r.error);
    });

    const target = Math.max(0, n - this.#options.finalityLag);
    while (this.#finalized < target) {
      this.#finalized += 1;
      const done = this.#blocks[this.#finalized] as BlockRecord;
      for (const listener of this.#finalizedListeners) listener(done);
      for (const tx of done.included) tx.watch?.({ finalized: done.hash });
      done.included = [];
    }
    return block;
  }

  /** Drops every pooled transaction (status "dropped"); pending dev operations fail. */
  shutdown(): void {
    for (const tx of this.#pool.splice(0)) tx.watch?.("dropped");
    for (const op of this.#dev.splice(0)) op.reject(new Error("local subtensor closed"));
  }

  #remove(tx: PoolTx): void {
    const i = this.#pool.indexOf(tx);
    if (i >= 0) this.#pool.splice(i, 1);
  }

  // After an upgrade, what the pool holds was signed for the old spec (CheckSpecVersion): each
  // transaction is validated again and dropped as invalid when it no longer passes.
  #revalidatePool(): void {
    for (const tx of [...this.#pool]) {
      try {
        this.#validate(tx.ex.bytes);
      } catch {
        this.#remove(tx);
        tx.watch?.("invalid");
      }
    }
  }

  // The write_pulse extrinsics of block `n`, one round each, with their NewPulse events.
  #includePulses(n: number, body: BodyItem[], events: Uint8Array[]): void {
    const rounds = roundsToFetch(this.state, this.beacon, this.timestampOf(n - 1));
    const info = dispatchInfo(WRITE_PULSE_WEIGHT, "Normal", "Yes");
    const runtime = this.state.runtime;
    for (const round of rounds) {
      writePulses(this.state, this.beacon, [round]);
      const index = body.length;
      body.push({
        digest: blake2_256(concatBytes([new TextEncoder().encode("write_pulse"), u64le(round)])),
        build: () => toHex(writePulseExtrinsic(runtime, this.beacon, this.#worker, n - 1, round)),
      });
      events.push(this.#event(index, "Drand", "NewPulse", [[round.toString()]]));
      events.push(this.#event(index, "System", "ExtrinsicSuccess", [info]));
    }
  }

  #record(header: BlockHeader, body: BodyItem[]): BlockRecord {
    const hash = toHex(blake2_256(encodeHeader(header)));
    const block = new Block(header.number, hash, header, body);
    this.#blocks[header.number] = block;
    this.#byHash.set(hash, header.number);
    return block;
  }

  // Applies one signed transaction at extrinsic `index` of block `n`; returns its events.
  #apply(tx: PoolTx, index: number, n: number): Uint8Array[] {
    const state = this.state;
    state.setNonce(tx.who, tx.nonce + 1);
    const info = dispatchInfo(
      callRefTime(tx.ex.pallet, tx.ex.method) ?? SET_WEIGHTS_REF_TIME,
      "Normal",
      "No",
    );
    const feePaid = this.#event(index, "TransactionPayment", "TransactionFeePaid", [
      tx.who,
      0,
      tx.ex.tip.toString(),
    ]);
    const failed = (error: ModuleErrorIndex) => [
      feePaid,
      this.#event(index, "System", "ExtrinsicFailed", [
        { Module: { index: error.index, error: new Uint8Array([error.variant, 0, 0, 0]) } },
        info,
      ]),
    ];
    const moduleError = (name: string) => {
      const error = this.state.runtime.moduleError(name);
      if (!error) throw new Error(`no ${name} in the metadata`);
      return error;
    };
    if (tx.forced) return failed(tx.forced);
    if (tx.ex.method === "commit_timelocked_weights") {
      const { netuid, commit, revealRound, version } = commitArgs(tx.ex);
      const outcome = commitTimelockedWeights(
        state,
        tx.who,
        n,
        netuid,
        commit,
        revealRound,
        version,
      );
      if (!outcome.ok) return failed(moduleError(outcome.error));
      return [
        this.#event(index, "SubtensorModule", "TimelockedWeightsCommitted", [
          tx.who,
          outcome.netuidIndex,
          outcome.hash,
          revealRound.toString(),
        ]),
        feePaid,
        this.#event(index, "System", "ExtrinsicSuccess", [info]),
      ];
    }
    const args = tx.ex.call.args as unknown as Codec[];
    const [netuid, dests, weights, versionKey] = args.map((a) => a.toPrimitive()) as [
      number,
      number[],
      number[],
      number | string,
    ];
    const outcome = setWeights(
      state.weightsView(),
      tx.who,
      n,
      netuid,
      dests,
      weights,
      BigInt(versionKey),
    );
    if (!outcome.ok) return failed(moduleError(outcome.error));
    state.storeWeights(
      outcome.netuidIndex,
      outcome.uid,
      outcome.weights,
      outcome.updateLastUpdate,
      n,
    );
    return [
      this.#event(index, "SubtensorModule", "WeightsSet", [outcome.netuidIndex, outcome.uid]),
      feePaid,
      this.#event(index, "System", "ExtrinsicSuccess", [info]),
    ];
  }

  #epochEvent(e: EpochEvent): Uint8Array {
    return e.name === "EpochDeferred"
      ? this.#event(INITIALIZATION, "SubtensorModule", "EpochDeferred", [
          e.netuid,
          e.fromBlock,
          e.toBlock,
        ])
      : this.#event(INITIALIZATION, "SubtensorModule", "EpochSkipped", [e.netuid, e.block]);
  }

  #revealEvent(e: RevealEvent): Uint8Array {
    return e.name === "WeightsSet"
      ? this.#event(INITIALIZATION, "SubtensorModule", "WeightsSet", [e.netuidIndex, e.uid])
      : this.#event(INITIALIZATION, "SubtensorModule", "TimelockedWeightsRevealed", [
          e.netuidIndex,
          e.who,
        ]);
  }

  // One EventRecord: Phase::ApplyExtrinsic(index) (or Phase::Initialization), the event, no
  // topics.
  #event(index: number | typeof INITIALIZATION, pallet: string, name: string, fields: unknown[]) {
    const phase =
      index === INITIALIZATION
        ? new Uint8Array([2])
        : concatBytes([new Uint8Array([0]), u32le(index)]);
    return concatBytes([
      phase,
      this.state.runtime.encodeEvent(pallet, name, fields),
      new Uint8Array([0]),
    ]);
  }
}

const INITIALIZATION = "initialization";

/** The arguments of a `commit_timelocked_weights` call. */
function commitArgs(ex: DecodedExtrinsic) {
  const [netuid, commit, revealRound, version] = ex.call.args as unknown as [
    Codec,
    Codec & { toU8a(bare?: boolean): Uint8Array },
    Codec,
    Codec,
  ];
  return {
    netuid: Number(netuid.toString()),
    commit: commit.toU8a(true),
    revealRound: BigInt(revealRound.toString()),
    version: Number(version.toString()),
  };
}

function dispatchInfo(refTime: bigint, dispatchClass: string, pays: string) {
  return {
    weight: { refTime: refTime.toString(), proofSize: 0 },
    class: dispatchClass,
    paysFee: pays,
  };
}

/** SCALE of a header with an empty digest; its blake2-256 is the block hash. */
export function encodeHeader(header: BlockHeader): Uint8Array {
  return concatBytes([
    fromHex(header.parentHash),
    compact(header.number),
    fromHex(header.stateRoot),
    fromHex(header.extrinsicsRoot),
    compact(0),
  ]);
}

/** A header as the JSON-RPC API returns it. */
export function headerJson(header: BlockHeader) {
  return {
    parentHash: header.parentHash,
    number: hexNumber(header.number),
    stateRoot: header.stateRoot,
    extrinsicsRoot: header.extrinsicsRoot,
    digest: { logs: [] as string[] },
  };
}
