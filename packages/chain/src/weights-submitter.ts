import { createLogger, type Logger, type Sql, type WeightsSnapshot } from "@platform/core";
import { type ApiPromise, Keyring } from "@polkadot/api";
import type { SubmittableExtrinsic } from "@polkadot/api/types";
import type {
  DispatchError,
  EventRecord,
  ExtrinsicEra,
  ExtrinsicStatus,
} from "@polkadot/types/interfaces";
import type { Codec, IKeyringPair } from "@polkadot/types/types";
import { hexToU8a, isHex, u8aToHex } from "@polkadot/util";
import { blake2AsHex, cryptoWaitReady } from "@polkadot/util-crypto";
import {
  type BlockRef,
  type ChainClient,
  type ChainConnection,
  ChainError,
} from "./chain-client.js";
import {
  advanceCommitState,
  type BeaconChoice,
  COMMIT_REVEAL_VERSION,
  type CommitPlan,
  type CommitState,
  firstCommitBlockOf,
  MAX_UNREVEALED_COMMITS,
  minRoundMarginBlocks,
  planCommit,
  readBestTime,
  readCommitEpochs,
  readCommitState,
  resolveBeacon,
  roundMarginBlocks,
  storageEntry,
  trackReveal,
} from "./commit-reveal.js";
import { type SubmissionKind, type SubmissionRecord, SubmissionStore } from "./submission-store.js";
import {
  BURN_UID,
  type BuiltWeights,
  buildWeights,
  CommitRevealEnabledError,
  checkCommitTimelocked,
  checkSetWeights,
  type LocalCheck,
  LocalCheckError,
  localCheckError,
  publicKeyHex,
  readSubnetRules,
  type SubnetRules,
} from "./subnet-rules.js";
import { timelockEncrypt } from "./timelock.js";
import { encodeWeightsTlockPayload } from "./weights-tlock-payload.js";

/**
 * Where a validator's sr25519 key comes from: a keypair already loaded (a `KeyringPair` from
 * @polkadot/keyring or @polkadot/api's `Keyring` satisfies `IKeyringPair`), a BIP-39 mnemonic,
 * a 32-byte mini-secret seed (a Bittensor wallet hotkey file's `secretSeed`), a secret URI
 * (`//Alice`, `mnemonic//hard/soft`), or a 64-byte sr25519 secret key with its public key (a
 * hotkey file's `privateKey` and `publicKey`).
 */
export type ValidatorKeySource =
  | IKeyringPair
  | { mnemonic: string }
  | { seed: string | Uint8Array }
  | { uri: string }
  | { secretKey: string | Uint8Array; publicKey: string | Uint8Array };

const bytes = (value: string | Uint8Array) =>
  typeof value === "string" ? (isHex(value) ? hexToU8a(value) : hexToU8a(`0x${value}`)) : value;

/**
 * The sr25519 keypair the submitter signs with, from any {@link ValidatorKeySource}. With
 * `expectedAddress` (a wallet file's `ss58Address`), a key that does not match is refused.
 */
export async function validatorKeypair(
  source: ValidatorKeySource,
  options: { expectedAddress?: string } = {},
): Promise<IKeyringPair> {
  await cryptoWaitReady();
  const keyring = new Keyring({ type: "sr25519", ss58Format: 42 });
  let pair: IKeyringPair;
  if ("sign" in source) pair = source;
  else if ("mnemonic" in source) pair = keyring.addFromMnemonic(source.mnemonic.trim());
  else if ("uri" in source) pair = keyring.addFromUri(source.uri);
  else if ("seed" in source) {
    const seed = bytes(source.seed);
    if (seed.length !== 32) throw new Error("an sr25519 seed is 32 bytes");
    pair = keyring.addFromSeed(seed);
  } else {
    pair = keyring.addFromPair({
      publicKey: bytes(source.publicKey),
      secretKey: bytes(source.secretKey),
    });
  }
  if (options.expectedAddress !== undefined) {
    const expected = publicKeyHex(options.expectedAddress);
    if (expected === undefined || expected !== u8aToHex(pair.publicKey)) {
      throw new Error("the key does not match the wallet's ss58Address");
    }
  }
  return pair;
}

/** A vector to send as it is (for operators' tools and tests); uids and values are u16. */
export interface RawVector {
  uids: readonly number[];
  weights: readonly number[];
  /** Default: the submitter's version key. */
  versionKey?: bigint | number;
  snapshotId?: number | null;
}

/** What a commit is locked to: the chain state read, the beacon key, the round and epochs. */
export interface PreparedCommit {
  state: CommitState;
  beacon: BeaconChoice;
  plan: CommitPlan;
}

/** A vector ready to send, with what it was built from and what the local checks said. */
export interface PreparedWeights {
  snapshotId: number | null;
  netuid: number;
  hotkey: string;
  /** The validator's uid at `rules.block` (undefined when not registered). */
  uid: number | undefined;
  rules: SubnetRules;
  uids: number[];
  weights: number[];
  versionKey: bigint;
  /** How the snapshot became the vector (absent for a raw vector). */
  built: BuiltWeights | undefined;
  /**
   * `set_weights` while commit-reveal is off; `commit` (`commit_timelocked_weights`, never
   * `set_weights`) while `CommitRevealWeightsEnabled` is on.
   */
  mode: SubmissionKind;
  /** For a commit: what it is locked to (undefined for set_weights). */
  commit: PreparedCommit | undefined;
  /** The chain's checks in its order (for a commit: the commit's, then the reveal's), then ours. */
  check: LocalCheck;
}

/**
 * What a submission came to. `dry_run`: everything but the send; `finalized`: set_weights
 * confirmed; `committed`: a commit confirmed (its reveal is followed by `trackReveals`).
 */
export type SubmitResult =
  | { status: "dry_run"; prepared: PreparedWeights }
  | {
      status: "finalized" | "failed" | "dropped" | "committed";
      prepared: PreparedWeights;
      record: SubmissionRecord;
    };

/** Progress of a submission, for logs, dashboards and tests. */
export type SubmitterEvent =
  | { type: "prepared"; prepared: PreparedWeights }
  /** Recorded as pending and signed; the next step sends it. */
  | { type: "signed"; record: SubmissionRecord }
  | { type: "sent"; record: SubmissionRecord }
  | { type: "in_block"; record: SubmissionRecord }
  /** The extrinsic's outcome: finalized / committed / failed / dropped. */
  | { type: "settled"; record: SubmissionRecord }
  /** A commit's reveal outcome: the record is `revealed` or `unrevealed` (with its cause). */
  | { type: "reveal"; record: SubmissionRecord };

/** Options of {@link createWeightsSubmitter}. */
export interface WeightsSubmitterOptions {
  client: ChainClient;
  sql: Sql;
  netuid: number;
  keypair: IKeyringPair;
  /** `version_key` sent with every vector; default the subnet's `WeightsVersionKey` (always accepted). */
  versionKey?: bigint | number;
  /** Send a vector whose only non-zero weight is the burn uid; default false. */
  allowBurn?: boolean;
  /** Default {@link BURN_UID} (0). */
  burnUid?: number;
  /** Blocks a signed extrinsic stays valid (a power of two, 4..65536); default 64. */
  eraPeriod?: number;
  /** Bound on waiting for one attempt's outcome; default (eraPeriod + 16) block times, doubled. */
  settleTimeoutMs?: number;
  /**
   * PLATFORM_DRAND_PUBLIC_KEY: the beacon key (96-byte compressed G2, hex) commits are encrypted
   * to. Default: drand quicknet, or the local subtensor's own (see `resolveBeacon`).
   */
  drandPublicKey?: string | Uint8Array;
  /** The local subtensor's genesis hash when the caller started it (`platform dev`). */
  localChainGenesis?: string;
  /**
   * Seconds per block for the reveal round. Default 12 on finney and testnet, elsewhere the
   * spacing of the chain's own `Timestamp.Now` (the local subtensor's clock is simulated).
   */
  blockTimeSeconds?: number;
  log?: Logger;
  onEvent?: (event: SubmitterEvent) => void;
}

/** Options of one submission. */
export interface SubmitOptions {
  signal?: AbortSignal;
  /** Build, check and print; never sign or send. */
  dryRun?: boolean;
  /** TESTS ONLY: send even when a local check fails, to see the chain's own answer. */
  skipLocalChecks?: boolean;
  /**
   * TESTS ONLY: build a set_weights even while commit-reveal is on (refused locally with
   * CommitRevealEnabledError unless `skipLocalChecks`). Default: whatever the subnet takes.
   */
  method?: SubmissionKind;
}

/** The submitter: one per (netuid, hotkey); used by the CLI validator and the master's own. */
export interface WeightsSubmitter {
  readonly hotkey: string;
  readonly netuid: number;
  readonly store: SubmissionStore;
  /**
   * Reconciles the attempts a previous run left open against the chain, waiting (bounded) until
   * each is final, then follows the commits still awaiting their reveal. With commit-reveal on,
   * it also chooses (and logs) the beacon key.
   */
  start(options?: { signal?: AbortSignal }): Promise<SubmissionRecord[]>;
  /**
   * Reads the subnet at a pinned finalized block and builds the vector and its checks: a
   * set_weights, or a commit while commit-reveal is on.
   */
  prepare(snapshot: WeightsSnapshot, options?: SubmitOptions): Promise<PreparedWeights>;
  /** Prepares, checks (LocalCheckError on refusal), sends, confirms from the block's events, records. */
  submit(snapshot: WeightsSnapshot, options?: SubmitOptions): Promise<SubmitResult>;
  /** The same for a vector given as is (still checked unless `skipLocalChecks`). */
  submitVector(vector: RawVector, options?: SubmitOptions): Promise<SubmitResult>;
  /**
   * Checks (LocalCheckError on refusal) and sends what `prepare` built; the caller reconciles
   * first (`submit` does both).
   */
  submitPrepared(prepared: PreparedWeights, options?: SubmitOptions): Promise<SubmitResult>;
  /** Settles open attempts from the chain; with `wait`, until none is open (bounded). */
  reconcile(options?: { wait?: boolean; signal?: AbortSignal }): Promise<SubmissionRecord[]>;
  /**
   * Follows every committed commit to its reveal (see `trackReveal`) and records the outcome
   * (`revealed`, or `unrevealed` with its cause); returns the commits settled by this call.
   */
  trackReveals(options?: { signal?: AbortSignal }): Promise<SubmissionRecord[]>;
  /** The beacon commits are encrypted to (chosen once per chain). */
  beacon(options?: { signal?: AbortSignal }): Promise<BeaconChoice>;
}

/** What the block's events say about one extrinsic. */
interface Receipt {
  block: BlockRef;
  ok: boolean;
  error: { code: string; name: string; message: string | null } | null;
}

type Item =
  | { kind: "status"; status: ExtrinsicStatus }
  | { kind: "error"; error: unknown }
  | { kind: "complete" };

function rpcError(error: unknown): { code: string; name: string; message: string } | undefined {
  const e = error as { code?: unknown; data?: unknown; message?: unknown };
  if (typeof e?.code !== "number" || e.code <= 0) return undefined;
  const text = typeof e.message === "string" ? e.message : String(error);
  const name = typeof e.data === "string" && e.data ? e.data : text.replace(/^\d+:\s*/, "");
  return { code: String(e.code), name, message: text };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The node does not have a block's body (pruned, or not yet imported). */
export class BlockUnavailableError extends Error {
  override readonly name = "BlockUnavailableError";

  constructor(hash: string) {
    super(`the node has no body for block ${hash}`);
  }
}

/**
 * What a receipt must show. A set_weights: `WeightsSet(netuid, uid)`. A commit (`commit` given):
 * `TimelockedWeightsCommitted(who, netuid, hash, round)` with the hotkey's key, the commit's
 * blake2_256 and its round. A `SubmissionRecord` is one.
 */
export interface ReceiptExpectation {
  netuid: number;
  uid: number | null;
  /** The signer (SS58); needed for a commit. */
  hotkey?: string;
  commit?: { hash: string; revealRound: number } | null;
}

/**
 * Reads an extrinsic's receipt from block `hash`: its index in the body, then the block's
 * `System.Events` for that index. Success is `System.ExtrinsicSuccess` AND
 * `SubtensorModule.WeightsSet(netuid, uid)` (a commit: `TimelockedWeightsCommitted(who, netuid,
 * blake2_256(commit), round)`); a failure carries the decoded module error. Undefined when the
 * extrinsic is not in that block.
 */
export async function readReceipt(
  api: ApiPromise,
  hash: string,
  extrinsicHash: string,
  expect: ReceiptExpectation,
): Promise<Receipt | undefined> {
  const signed = await api.rpc.chain.getBlock(hash);
  // A node that no longer keeps the body answers null, which decodes to an empty block: only a
  // header that hashes to the block asked for proves the body is the real one.
  if (signed.block.header.hash.toHex() !== hash) throw new BlockUnavailableError(hash);
  const index = signed.block.extrinsics.findIndex((ex) => ex.hash.toHex() === extrinsicHash);
  if (index < 0) return undefined;
  const block = { number: signed.block.header.number.toNumber(), hash };
  const at = await api.at(hash);
  const eventsEntry = at.query["system"]?.["events"];
  if (!eventsEntry) throw new Error("the runtime has no System.Events");
  const records = (await eventsEntry()) as unknown as EventRecord[];
  const mine = records.filter(
    (r) => r.phase.isApplyExtrinsic && r.phase.asApplyExtrinsic.toNumber() === index,
  );
  const failed = mine.find(
    (r) => r.event.section === "system" && r.event.method === "ExtrinsicFailed",
  );
  if (failed) {
    const dispatchError = failed.event.data[0] as DispatchError;
    if (dispatchError.isModule) {
      const meta = api.registry.findMetaError(dispatchError.asModule);
      return {
        block,
        ok: false,
        error: {
          code: "module",
          name: meta.name,
          message: `${meta.section}.${meta.name}: ${meta.docs.join(" ")}`,
        },
      };
    }
    return {
      block,
      ok: false,
      error: { code: "dispatch", name: dispatchError.type, message: null },
    };
  }
  const success = mine.some(
    (r) => r.event.section === "system" && r.event.method === "ExtrinsicSuccess",
  );
  if (expect.commit) {
    const who = expect.hotkey === undefined ? undefined : publicKeyHex(expect.hotkey);
    const committed = mine.filter(
      (r) =>
        r.event.section === "subtensorModule" && r.event.method === "TimelockedWeightsCommitted",
    );
    const matches = committed.some((r) => {
      const [account, netuid, commitHash, round] = r.event.data;
      return (
        (who === undefined || u8aToHex(account?.toU8a()) === who) &&
        Number(netuid?.toString()) === expect.netuid &&
        commitHash?.toHex() === expect.commit?.hash &&
        Number(round?.toString()) === expect.commit?.revealRound
      );
    });
    if (success && matches) return { block, ok: true, error: null };
    return {
      block,
      ok: false,
      error: {
        code: "receipt",
        name: !success
          ? "NoExtrinsicSuccessEvent"
          : committed.length === 0
            ? "NoCommittedEvent"
            : "CommittedEventMismatch",
        message: !success
          ? "neither ExtrinsicSuccess nor ExtrinsicFailed for this extrinsic"
          : "ExtrinsicSuccess without TimelockedWeightsCommitted(who, netuid, blake2_256(commit), round) for this commit",
      },
    };
  }
  const weightsSet = mine.some(
    (r) =>
      r.event.section === "subtensorModule" &&
      r.event.method === "WeightsSet" &&
      Number(r.event.data[0]?.toString()) === expect.netuid &&
      (expect.uid === null || Number(r.event.data[1]?.toString()) === expect.uid),
  );
  if (success && weightsSet) return { block, ok: true, error: null };
  return {
    block,
    ok: false,
    error: {
      code: "receipt",
      name: success ? "NoWeightsSetEvent" : "NoExtrinsicSuccessEvent",
      message: success
        ? "ExtrinsicSuccess without SubtensorModule.WeightsSet for this netuid and uid"
        : "neither ExtrinsicSuccess nor ExtrinsicFailed for this extrinsic",
    },
  };
}

let timelockWarm = false;

// The first timelock encryption of a process builds the curve library's tables (about half a
// second); done at start, the first commit does not spend that out of its round's margin (6
// blocks: 72 s on finney, but 600 ms on a fast test chain).
function warmTimelock(publicKey: Uint8Array): void {
  if (timelockWarm) return;
  timelockWarm = true;
  timelockEncrypt(new Uint8Array(1), 1, publicKey);
}

/** Waits for `promise`, the connection's loss, a timeout or the caller's abort (which throws). */
function waitFor(
  promise: Promise<void>,
  connection: ChainConnection,
  ms: number,
  signal: AbortSignal | undefined,
): Promise<"answered" | "lost" | "timeout"> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish("timeout"), ms);
    const onLost = () => finish("lost");
    const onAbort = () => {
      cleanup();
      reject(new ChainError("aborted", "aborted", { cause: signal?.reason }));
    };
    function cleanup() {
      clearTimeout(timer);
      connection.lost.removeEventListener("abort", onLost);
      signal?.removeEventListener("abort", onAbort);
    }
    function finish(outcome: "answered" | "lost" | "timeout") {
      cleanup();
      resolve(outcome);
    }
    if (signal?.aborted) return onAbort();
    if (connection.lost.aborted) return finish("lost");
    connection.lost.addEventListener("abort", onLost, { once: true });
    signal?.addEventListener("abort", onAbort, { once: true });
    promise.then(() => finish("answered"));
  });
}

/**
 * The submitter. It never sends twice for one intent: an attempt is recorded (pending, with its
 * extrinsic hash, nonce and era) before it is sent; a new one is only built once every open
 * attempt is final, settled from the chain (its hash in a block and that block's events; or its
 * era over, its nonce used, or for a commit its drand round stored, without it). The rate limit
 * is read from the chain's `LastUpdate`, never from memory.
 *
 * While `CommitRevealWeightsEnabled(netuid)` is on it sends `commit_timelocked_weights(netuid,
 * commit, reveal_round, CommitRevealWeightsVersion)` and never `set_weights`: the
 * `WeightsTlockPayload {hotkey, uids, values, version_key}` timelock-encrypted (`timelockEncrypt`)
 * to the round bittensor-drand's formula gives from the best block and its `Timestamp.Now`, for
 * the beacon `resolveBeacon` chooses. It checks the commit's rules and the reveal's first, in the
 * chain's order, sends at most one commit per epoch, confirms it from
 * `TimelockedWeightsCommitted(who, netuid, blake2_256(commit), round)`, and then follows it to
 * its reveal (`trackReveals`).
 */
export function createWeightsSubmitter(options: WeightsSubmitterOptions): WeightsSubmitter {
  const { client, netuid, keypair } = options;
  const log = options.log ?? createLogger({ name: "weights-submitter" });
  const store = new SubmissionStore(options.sql);
  const hotkey = keypair.address;
  const burnUid = options.burnUid ?? BURN_UID;
  const eraPeriod = options.eraPeriod ?? 64;
  if (!(Number.isInteger(eraPeriod) && eraPeriod >= 4 && (eraPeriod & (eraPeriod - 1)) === 0)) {
    throw new Error("eraPeriod must be a power of two from 4");
  }
  const settleTimeoutMs = options.settleTimeoutMs ?? 2 * (eraPeriod + 16) * client.blockTimeMs;
  // The last block scanned for each open attempt (only an optimisation: a restart rescans).
  const scanned = new Map<number, number>();
  // The last finalized block each awaited commit was still stored at (bisection starts there).
  const lastPresent = new Map<number, number>();
  // The beacon, chosen once per chain (genesis hash).
  let chosenBeacon: { genesis: string | undefined; beacon: Promise<BeaconChoice> } | undefined;
  const warnedBeaconKeys = new Set<string>();

  const emit = (event: SubmitterEvent) => {
    try {
      options.onEvent?.(event);
    } catch (error) {
      log.error("submitter event listener failed", { error });
    }
  };

  const versionKeyFor = (rules: SubnetRules, given?: bigint | number) =>
    given !== undefined
      ? BigInt(given)
      : options.versionKey !== undefined
        ? BigInt(options.versionKey)
        : rules.weightsVersionKey;

  const beacon = (opts: { signal?: AbortSignal } = {}): Promise<BeaconChoice> => {
    const genesis = client.genesisHash;
    if (!chosenBeacon || (genesis !== undefined && chosenBeacon.genesis !== genesis)) {
      const choosing = resolveBeacon(
        client,
        { drandPublicKey: options.drandPublicKey, localChainGenesis: options.localChainGenesis },
        { signal: opts.signal },
      ).then((choice) => {
        log.info("commits are encrypted to this drand beacon", {
          source: choice.source,
          publicKey: choice.publicKeyHex,
          genesisTime: choice.genesisTime,
          period: choice.period,
        });
        return choice;
      });
      const entry = { genesis, beacon: choosing };
      chosenBeacon = entry;
      // A failure is not kept: the next call chooses again.
      choosing.catch(() => {
        if (chosenBeacon === entry) chosenBeacon = undefined;
      });
    }
    return chosenBeacon.beacon;
  };

  // The policy on top of the chain's rules: one commit per epoch it is stored under. Only the
  // last commit of an epoch sets the weights the next epoch uses (they reveal in one block, in
  // order), so more would only add extrinsics and make reveals ambiguous. A commit that turns
  // out unrevealed is followed by the next one, at the next allowed block (see trackReveals).
  const committedThisEpoch = async (
    state: CommitState,
  ): Promise<Exclude<LocalCheck, { ok: true }> | undefined> => {
    const recorded = await store.commitsForEpoch(netuid, hotkey, state.targetEpoch);
    if (recorded.length === 0 && state.ownCommitsInTargetEpoch === 0) return undefined;
    return {
      ok: false,
      check: "CommittedThisEpoch",
      allowedFrom: firstCommitBlockOf(netuid, state.tempo, state.targetEpoch + 1),
    };
  };

  const prepared = async (
    rules: SubnetRules,
    vector: { uids: number[]; weights: number[]; versionKey: bigint },
    snapshotId: number | null,
    built: BuiltWeights | undefined,
    opts: SubmitOptions,
  ): Promise<PreparedWeights> => {
    const uid = rules.uidsByKey.get(u8aToHex(keypair.publicKey));
    const base = { snapshotId, netuid, hotkey, uid, rules, ...vector, built };
    if (!rules.commitRevealEnabled || opts.method === "set_weights") {
      return {
        ...base,
        mode: "set_weights",
        commit: undefined,
        check: checkSetWeights(rules, keypair.publicKey, vector),
      };
    }
    const chosen = await beacon({ signal: opts.signal });
    const state = await readCommitState(client, rules, keypair.publicKey, {
      signal: opts.signal,
      blockTimeSeconds: options.blockTimeSeconds,
    });
    if (
      state.beaconConfigKey !== null &&
      state.beaconConfigKey !== chosen.publicKeyHex.toLowerCase() &&
      !warnedBeaconKeys.has(state.beaconConfigKey)
    ) {
      warnedBeaconKeys.add(state.beaconConfigKey);
      log.error(
        "the chain's Drand.BeaconConfig key is not the key commits are encrypted to: they will not decrypt at reveal",
        { chain: state.beaconConfigKey, encryptingTo: chosen.publicKeyHex, source: chosen.source },
      );
    }
    const plan = planCommit(netuid, state, chosen);
    let check = checkCommitTimelocked(rules, keypair.publicKey, vector, {
      commitRevealVersion: state.commitRevealVersion,
      payloadVersion: COMMIT_REVEAL_VERSION,
      ownCommitsInEpoch: state.ownCommitsInTargetEpoch,
      maxUnrevealedCommits: MAX_UNREVEALED_COMMITS,
    });
    // SubtensorTransactionExtension refuses a round the chain already stored (Custom 15).
    if (check.ok && BigInt(plan.revealRound) < state.lastStoredRound) {
      check = { ok: false, check: "InvalidRevealRound" };
    }
    if (check.ok) check = (await committedThisEpoch(state)) ?? check;
    return { ...base, mode: "commit", commit: { state, beacon: chosen, plan }, check };
  };

  const prepare = async (
    snapshot: WeightsSnapshot,
    opts: SubmitOptions = {},
  ): Promise<PreparedWeights> => {
    const rules = await readSubnetRules(client, netuid, { signal: opts.signal });
    const ownUid = rules.uidsByKey.get(u8aToHex(keypair.publicKey));
    const built = buildWeights(snapshot.hotkeys, rules, { burnUid, ownUid, log });
    if (built.allBurn && !options.allowBurn) {
      throw new LocalCheckError(
        "AllBurn",
        netuid,
        `every weight of snapshot ${snapshot.id} goes to the burn uid ${burnUid}; pass allowBurn to send it`,
      );
    }
    const result = await prepared(
      rules,
      { uids: built.uids, weights: built.weights, versionKey: versionKeyFor(rules) },
      snapshot.id,
      built,
      opts,
    );
    emit({ type: "prepared", prepared: result });
    return result;
  };

  // ---- reconciliation ----

  // Looks for the attempt in blocks it could be in (after its era's birth); settles it when the
  // answer is final. Returns the row as it now stands.
  const reconcileOne = async (
    row: SubmissionRecord,
    signal: AbortSignal | undefined,
  ): Promise<SubmissionRecord> => {
    // One bounded call per block: a long scan never trips the call timeout, and a dropped
    // connection costs one block's read, not the whole scan.
    const receiptIn = (n: number) =>
      client.call(
        `looking for extrinsic ${row.extrinsicHash} in block ${n}`,
        async (api) => {
          const hash = await api.rpc.chain.getBlockHash(n);
          if (hash.isEmpty) return undefined;
          return readReceipt(api, hash.toHex(), row.extrinsicHash, row);
        },
        { signal },
      );
    const finalized = await client.finalized({ signal });
    const last = Math.min(finalized.number, row.eraDeath - 1);
    const unavailable: number[] = [];
    for (let n = Math.max(row.eraBirth, scanned.get(row.id) ?? row.eraBirth) + 1; n <= last; n++) {
      let receipt: Receipt | undefined;
      try {
        receipt = await receiptIn(n);
      } catch (error) {
        if (!(error instanceof BlockUnavailableError)) throw error;
        unavailable.push(n);
        continue;
      }
      if (receipt) return settleFromReceipt(row, receipt);
      if (unavailable.length === 0) scanned.set(row.id, n);
    }
    // Not in a finalized block: is it in a best block past the finalized one?
    const best = await client.call(
      "reading the best head",
      async (api) => (await api.rpc.chain.getHeader()).number.toNumber(),
      { signal },
    );
    for (
      let n = Math.max(finalized.number, row.eraBirth) + 1;
      n <= Math.min(best, row.eraDeath - 1);
      n++
    ) {
      const receipt = await receiptIn(n).catch((error: unknown) => {
        if (error instanceof BlockUnavailableError) return undefined;
        throw error;
      });
      if (receipt) return store.markInBlock(row.id, receipt.block);
    }
    if (row.commit && unavailable.length === 0) {
      // Searched up to the finalized block and not past it: once the chain has stored a round
      // past the commit's, SubtensorTransactionExtension refuses it in every later block.
      const stored = await client.call(
        "reading Drand.LastStoredRound",
        async (api) =>
          BigInt(
            (
              (await storageEntry(api, "drand", "lastStoredRound").at(finalized.hash)) as Codec
            ).toString(),
          ),
        { signal },
      );
      if (stored > BigInt(row.commit.revealRound)) {
        return settled(
          await store.settle(row.id, {
            status: "dropped",
            error: {
              code: "round",
              name: "RevealRoundPassed",
              message: `not in any block up to ${finalized.number}, where Drand.LastStoredRound ${stored} is past its round ${row.commit.revealRound}`,
            },
          }),
        );
      }
    }
    if (finalized.number >= row.eraDeath - 1) {
      if (unavailable.length > 0) {
        // It cannot be confirmed nor ruled out. It is final for this record (the validator must
        // not stay blocked on it); a resend is still bounded by the chain's own LastUpdate.
        return settled(
          await store.settle(row.id, {
            status: "dropped",
            error: {
              code: "unverifiable",
              name: "BlocksUnavailable",
              message: `the node has no body for ${unavailable.length} block(s) its era allowed (first ${unavailable[0]})`,
            },
          }),
        );
      }
      return settled(
        await store.settle(row.id, {
          status: "dropped",
          error: {
            code: "era",
            name: "EraExpired",
            message: `not in any block up to ${row.eraDeath - 1}, the last its era allowed`,
          },
        }),
      );
    }
    if (unavailable.length > 0) return row;
    // Every block up to the finalized one was searched: if the account's nonce there is past
    // ours, another extrinsic used it and ours can never be included.
    const nonce = await client.call(
      "reading the account nonce",
      async (api) => {
        const at = await api.at(finalized.hash);
        const account = await at.query["system"]?.["account"]?.(row.hotkey);
        return Number((account?.toJSON() as { nonce?: number } | undefined)?.nonce ?? 0);
      },
      { signal },
    );
    if (nonce > row.nonce) {
      return settled(
        await store.settle(row.id, {
          status: "dropped",
          error: {
            code: "nonce",
            name: "NonceUsed",
            message: `nonce ${row.nonce} was used by another extrinsic by block ${finalized.number}`,
          },
        }),
      );
    }
    if (row.status === "in_block") return store.markRetracted(row.id);
    return row;
  };

  const settled = (record: SubmissionRecord): SubmissionRecord => {
    scanned.delete(record.id);
    emit({ type: "settled", record });
    const fields = {
      id: record.id,
      netuid,
      kind: record.kind,
      status: record.status,
      extrinsicHash: record.extrinsicHash,
      block: record.finalizedBlock?.number ?? null,
      error: record.errorName,
    };
    if (record.status === "finalized") log.info("weights confirmed on chain", fields);
    else if (record.status === "committed") {
      log.info("weights committed on chain; the reveal is awaited", {
        ...fields,
        revealRound: record.commit?.revealRound,
        commitEpoch: record.commit?.commitEpoch,
        revealEpoch: record.commit?.revealEpoch,
      });
    } else log.warn(record.kind === "commit" ? "weights not committed" : "weights not set", fields);
    return record;
  };

  const settleFromReceipt = async (row: SubmissionRecord, receipt: Receipt) => {
    if (!receipt.ok || !row.commit) {
      return settled(
        await store.settle(row.id, {
          status: receipt.ok ? "finalized" : "failed",
          block: receipt.block,
          error: receipt.error,
        }),
      );
    }
    const epochs = await readCommitEpochs(client, netuid, receipt.block, row.commit.hash);
    const record = await store.settle(row.id, {
      status: "committed",
      block: receipt.block,
      epochs,
    });
    if (record.status === "committed") {
      const linked = await store.linkRecommit(record.id);
      if (linked.length > 0) {
        log.info("the weights of unrevealed commits were committed again", {
          id: record.id,
          unrevealed: linked,
        });
      }
    }
    return settled(record);
  };

  // Reconciles until the row is final, waiting for blocks in between; bounded.
  const reconcileUntilFinal = async (
    row: SubmissionRecord,
    signal: AbortSignal | undefined,
  ): Promise<SubmissionRecord> => {
    const deadline = Date.now() + settleTimeoutMs;
    let current = row;
    for (;;) {
      try {
        current = await reconcileOne(current, signal);
      } catch (error) {
        if (error instanceof ChainError && error.kind === "aborted") throw error;
        if (Date.now() >= deadline) throw error;
        log.warn("reconciling an attempt with the chain failed; retrying", {
          id: row.id,
          error: errorText(error),
        });
      }
      if (current.status !== "pending" && current.status !== "in_block") return current;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new ChainError(
          "timeout",
          `attempt #${row.id} (${row.extrinsicHash}) is still ${current.status} after ${settleTimeoutMs} ms`,
        );
      }
      const head = client.head()?.number ?? 0;
      await client.waitForHead(head + 1, { signal, timeoutMs: left }).catch((error) => {
        if (error instanceof ChainError && error.kind === "aborted") throw error;
      });
    }
  };

  const reconcile = async (
    opts: { wait?: boolean; signal?: AbortSignal } = {},
  ): Promise<SubmissionRecord[]> => {
    const open = await store.open(netuid, hotkey);
    const out: SubmissionRecord[] = [];
    for (const row of open) {
      log.info("reconciling an open attempt with the chain", {
        id: row.id,
        kind: row.kind,
        status: row.status,
        extrinsicHash: row.extrinsicHash,
      });
      out.push(
        opts.wait
          ? await reconcileUntilFinal(row, opts.signal)
          : await reconcileOne(row, opts.signal),
      );
    }
    return out;
  };

  // ---- sending ----

  const follow = async (
    row: SubmissionRecord,
    connection: ChainConnection,
    items: Item[],
    wake: { notify: (() => void) | undefined },
    signal: AbortSignal | undefined,
  ): Promise<SubmissionRecord> => {
    const deadline = Date.now() + settleTimeoutMs;
    let current = row;
    const offHead = client.onHead(() => wake.notify?.());
    try {
      for (;;) {
        if (signal?.aborted) throw new ChainError("aborted", "aborted", { cause: signal.reason });
        const item = items.shift();
        if (!item) {
          if (connection.lost.aborted) {
            log.warn("connection lost while following an extrinsic; reconciling from the chain", {
              id: row.id,
            });
            return reconcileUntilFinal(current, signal);
          }
          const head = client.head()?.number ?? 0;
          if (head >= row.eraDeath + 8 || Date.now() >= deadline) {
            log.warn("no final status for an extrinsic; reconciling from the chain", {
              id: row.id,
            });
            return reconcileUntilFinal(current, signal);
          }
          await new Promise<void>((resolve) => {
            const timer = setTimeout(
              done,
              Math.max(1, Math.min(deadline - Date.now(), client.blockTimeMs)),
            );
            function done() {
              clearTimeout(timer);
              wake.notify = undefined;
              connection.lost.removeEventListener("abort", done);
              signal?.removeEventListener("abort", done);
              resolve();
            }
            wake.notify = done;
            connection.lost.addEventListener("abort", done, { once: true });
            signal?.addEventListener("abort", done, { once: true });
          });
          continue;
        }
        if (item.kind !== "status") {
          log.warn("the extrinsic's status subscription ended early; reconciling from the chain", {
            id: row.id,
            error: item.kind === "error" ? errorText(item.error) : null,
          });
          return reconcileUntilFinal(current, signal);
        }
        const status = item.status;
        try {
          const done = await onStatus(status);
          if (done) return done;
        } catch (error) {
          if (error instanceof ChainError && error.kind === "aborted") throw error;
          log.warn("following an extrinsic failed; reconciling from the chain", {
            id: row.id,
            error: errorText(error),
          });
          return reconcileUntilFinal(current, signal);
        }
      }
    } finally {
      offHead();
    }

    // Applies one status; returns the final row once there is one.
    async function onStatus(status: ExtrinsicStatus): Promise<SubmissionRecord | undefined> {
      if (status.isInBlock) {
        const hash = status.asInBlock.toHex();
        const receipt = await client.call(
          "reading the receipt",
          (api) => readReceipt(api, hash, row.extrinsicHash, row),
          { signal },
        );
        if (receipt) {
          current = await store.markInBlock(row.id, receipt.block);
          emit({ type: "in_block", record: current });
        }
      } else if (status.isRetracted) {
        current = await store.markRetracted(row.id);
      } else if (status.isFinalized) {
        const hash = status.asFinalized.toHex();
        const receipt = await client.call(
          "reading the receipt",
          (api) => readReceipt(api, hash, row.extrinsicHash, row),
          { signal },
        );
        if (receipt) return settleFromReceipt(row, receipt);
        return reconcileUntilFinal(current, signal);
      } else if (status.isFinalityTimeout) {
        return reconcileUntilFinal(current, signal);
      } else if (status.isInvalid || status.isDropped || status.isUsurped) {
        // The pool's word; check the chain once before believing it.
        const now = await reconcileOne(current, signal);
        if (now.status !== "pending" && now.status !== "in_block") return now;
        if (now.status === "in_block") return reconcileUntilFinal(now, signal);
        // Not in any block up to the best one: a commit whose round the best block has already
        // stored can never be included after it (it arrived late), which is why the pool let it go.
        const passed = row.commit
          ? await client.call(
              "reading Drand.LastStoredRound",
              async (api) => {
                const head = (await api.rpc.chain.getHeader()).hash.toHex();
                const value = await storageEntry(api, "drand", "lastStoredRound").at(head);
                return BigInt((value as Codec).toString());
              },
              { signal },
            )
          : undefined;
        if (row.commit && passed !== undefined && passed > BigInt(row.commit.revealRound)) {
          return settled(
            await store.settle(row.id, {
              status: "dropped",
              error: {
                code: "round",
                name: "RevealRoundPassed",
                message: `the node reported ${status.type}: Drand.LastStoredRound ${passed} at the best block is past its round ${row.commit.revealRound} (it arrived late)`,
              },
            }),
          );
        }
        return settled(
          await store.settle(row.id, {
            status: "dropped",
            error: { code: "pool", name: status.type, message: `the node reported ${status.type}` },
          }),
        );
      }
      return undefined;
    }
  };

  // The plan again from the best head as it is now, once its round is due far enough away: in an
  // epoch's last blocks the round is only 4 or 5 blocks off, a block or two later (the next
  // epoch) it is an epoch further, and the commit reveals no later.
  const freshPlan = async (
    commit: PreparedCommit,
    signal: AbortSignal | undefined,
  ): Promise<PreparedCommit> => {
    const { tempo, revealPeriodEpochs } = commit.state;
    const least = minRoundMarginBlocks(tempo);
    let now = await readBestTime(client, { signal });
    for (
      let waited = 0;
      waited < least &&
      roundMarginBlocks(netuid, tempo, revealPeriodEpochs, now.best.number) < least;
      waited++
    ) {
      await client.waitForHead(now.best.number + 1, { signal }).catch((error) => {
        if (error instanceof ChainError && error.kind === "aborted") throw error;
      });
      now = await readBestTime(client, { signal });
    }
    const state = advanceCommitState(netuid, commit.state, now);
    if (state === commit.state) return commit;
    return { ...commit, state, plan: planCommit(netuid, state, commit.beacon) };
  };

  const send = async (result: PreparedWeights, opts: SubmitOptions): Promise<SubmitResult> => {
    const { signal } = opts;
    if (!result.check.ok && !opts.skipLocalChecks) {
      if (result.check.check === "CommitRevealEnabled") throw new CommitRevealEnabledError(netuid);
      throw localCheckError(result.check, result.rules);
    }
    let commit = result.mode === "commit" ? result.commit : undefined;
    if (result.mode === "commit" && !commit)
      throw new Error("a commit was prepared without its plan");
    if (opts.dryRun) {
      log.info(commit ? "dry run: would commit weights" : "dry run: would send set_weights", {
        netuid,
        hotkey,
        uid: result.uid ?? null,
        block: result.rules.block.number,
        versionKey: result.versionKey.toString(),
        uids: result.uids,
        weights: result.weights,
        ...(commit
          ? {
              revealRound: commit.plan.revealRound,
              commitEpoch: commit.plan.commitEpoch,
              revealEpoch: commit.plan.revealEpoch,
              beacon: commit.beacon.source,
            }
          : {}),
      });
      return { status: "dry_run", prepared: result };
    }
    const next = await client.call(
      "reading the account nonce",
      async (api) => (await api.rpc.system.accountNextIndex(hotkey)).toNumber(),
      { signal },
    );
    if (commit) {
      // Locked to the round due from the head as it is now, not when the rules were read: the
      // round is a few blocks away, and only encrypting, signing and recording the attempt come
      // between this and the send.
      commit = await freshPlan(commit, signal);
      result = { ...result, commit };
    }
    // The commit: the payload the chain will decrypt, timelocked to the planned round.
    const sealed = commit
      ? (() => {
          const payload = encodeWeightsTlockPayload({
            hotkey: keypair.publicKey,
            uids: result.uids,
            values: result.weights,
            versionKey: result.versionKey,
          });
          const bytes = timelockEncrypt(payload, commit.plan.revealRound, commit.beacon.publicKey);
          return { bytes, hash: blake2AsHex(bytes, 256) };
        })()
      : undefined;
    const what = commit ? "commit_timelocked_weights" : "set_weights";
    // The era's birth right before signing: waiting for the round above must not eat the era.
    const birth = await client.finalized({ signal });
    // Signed and sent on one connection: the extrinsic is built with that api's registry.
    const { tx, nonce, era, connection } = await client.call(
      `signing ${what}`,
      async (api, connection) => {
        let extrinsic: SubmittableExtrinsic<"promise">;
        if (commit && sealed) {
          const call = api.tx["subtensorModule"]?.["commitTimelockedWeights"];
          if (!call)
            throw new Error("the runtime has no SubtensorModule.commit_timelocked_weights");
          // The version of the payload encrypted; the local checks require the chain's
          // CommitRevealWeightsVersion to be the same, so this is the value the chain asks for.
          extrinsic = call(
            netuid,
            u8aToHex(sealed.bytes),
            commit.plan.revealRound,
            COMMIT_REVEAL_VERSION,
          ) as SubmittableExtrinsic<"promise">;
        } else {
          const call = api.tx["subtensorModule"]?.["setWeights"];
          if (!call) throw new Error("the runtime has no SubtensorModule.set_weights");
          extrinsic = call(
            netuid,
            result.uids,
            result.weights,
            result.versionKey,
          ) as SubmittableExtrinsic<"promise">;
        }
        const mortal = api.createType("ExtrinsicEra", {
          current: birth.number,
          period: eraPeriod,
        }) as ExtrinsicEra;
        await extrinsic.signAsync(keypair, { nonce: next, era: mortal, blockHash: birth.hash });
        return { tx: extrinsic, nonce: next, era: mortal, connection };
      },
      { signal },
    );
    const eraBirth = era.asMortalEra.birth(birth.number);
    const eraDeath = era.asMortalEra.death(birth.number);
    const row = await store.insertPending({
      snapshotId: result.snapshotId,
      netuid,
      hotkey,
      uid: result.uid ?? null,
      builtBlock: result.rules.block,
      extrinsicHash: tx.hash.toHex(),
      nonce,
      eraBirth,
      eraDeath,
      uids: result.uids,
      weights: result.weights,
      versionKey: result.versionKey,
      ...(commit && sealed
        ? {
            commit: {
              hash: sealed.hash,
              revealRound: commit.plan.revealRound,
              commitEpoch: commit.plan.commitEpoch,
              revealEpoch: commit.plan.revealEpoch,
              beaconPublicKey: commit.beacon.publicKeyHex,
            },
          }
        : {}),
    });
    emit({ type: "signed", record: row });
    if (signal?.aborted)
      throw new ChainError("aborted", "aborted before sending", { cause: signal.reason });

    const items: Item[] = [];
    const wake: { notify: (() => void) | undefined } = { notify: undefined };
    const push = (item: Item) => {
      items.push(item);
      wake.notify?.();
    };
    let first: (() => void) | undefined;
    let firstError: unknown;
    const answered = new Promise<void>((resolve) => {
      first = resolve;
    });
    const subscription = connection.api.rx.rpc.author.submitAndWatchExtrinsic(tx).subscribe({
      next: (status) => {
        push({ kind: "status", status });
        first?.();
      },
      error: (error: unknown) => {
        firstError ??= error;
        push({ kind: "error", error });
        first?.();
      },
      complete: () => {
        push({ kind: "complete" });
        first?.();
      },
    });
    const final = (record: SubmissionRecord): SubmitResult => ({
      // A commit already revealed by the time it is reported is still a committed one.
      status: (record.status === "revealed" || record.status === "unrevealed"
        ? "committed"
        : record.status) as "finalized" | "failed" | "dropped" | "committed",
      prepared: result,
      record,
    });
    try {
      const answer = await waitFor(answered, connection, client.callTimeoutMs, signal);
      if (answer !== "answered") {
        // No answer: the node may or may not have it. Only the chain can tell.
        if (answer === "timeout") client.reconnect(`submitting ${what} timed out`);
        log.warn("no answer to the submission; reconciling from the chain", {
          id: row.id,
          reason: answer,
        });
        return final(await reconcileUntilFinal(row, signal));
      }
      if (items[0]?.kind !== "status") {
        const refused = rpcError(firstError);
        if (refused) {
          return final(settled(await store.settle(row.id, { status: "failed", error: refused })));
        }
        log.warn("the submission failed without a pool error; reconciling from the chain", {
          id: row.id,
          error: errorText(firstError),
        });
        return final(await reconcileUntilFinal(row, signal));
      }
      emit({ type: "sent", record: row });
      log.info(`${what} sent`, {
        id: row.id,
        netuid,
        extrinsicHash: row.extrinsicHash,
        uids: result.uids.length,
        ...(commit ? { revealRound: commit.plan.revealRound } : {}),
      });
      return final(await follow(row, connection, items, wake, signal));
    } finally {
      subscription.unsubscribe();
    }
  };

  // ---- reveals ----

  const trackReveals = async (opts: { signal?: AbortSignal } = {}): Promise<SubmissionRecord[]> => {
    const awaiting = await store.awaitingReveal(netuid, hotkey);
    const out: SubmissionRecord[] = [];
    for (const row of awaiting) {
      const tracking = await trackReveal(client, row, {
        signal: opts.signal,
        lastPresent: lastPresent.get(row.id),
        log,
      });
      if (tracking.state === "waiting") {
        lastPresent.set(row.id, tracking.checkedAt);
        continue;
      }
      lastPresent.delete(row.id);
      const record = await store.settleReveal(row.id, tracking.settlement);
      if (record.status !== "revealed" && record.status !== "unrevealed") continue;
      const fields = {
        id: record.id,
        netuid,
        revealRound: record.commit?.revealRound,
        revealEpoch: record.commit?.revealEpoch,
        block: record.commit?.revealBlock?.number ?? null,
      };
      if (record.status === "revealed") {
        log.info("commit revealed: the chain's weights are the committed ones", fields);
      } else {
        log.error("commit NOT revealed by the end of its reveal epoch; the weights go again", {
          ...fields,
          cause: record.commit?.cause,
          detail: record.commit?.detail,
          recommitId: record.commit?.recommitId ?? null,
        });
      }
      emit({ type: "reveal", record });
      out.push(record);
    }
    return out;
  };

  return {
    hotkey,
    netuid,
    store,
    async start(opts = {}) {
      const rules = await readSubnetRules(client, netuid, { signal: opts.signal });
      if (rules.commitRevealEnabled)
        warmTimelock((await beacon({ signal: opts.signal })).publicKey);
      const open = await reconcile({ wait: true, signal: opts.signal });
      await trackReveals({ signal: opts.signal });
      return open;
    },
    prepare,
    async submit(snapshot, opts = {}) {
      await reconcile({ wait: true, signal: opts.signal });
      return send(await prepare(snapshot, opts), opts);
    },
    async submitVector(vector, opts = {}) {
      await reconcile({ wait: true, signal: opts.signal });
      const rules = await readSubnetRules(client, netuid, { signal: opts.signal });
      const result = await prepared(
        rules,
        {
          uids: [...vector.uids],
          weights: [...vector.weights],
          versionKey: versionKeyFor(rules, vector.versionKey),
        },
        vector.snapshotId ?? null,
        undefined,
        opts,
      );
      emit({ type: "prepared", prepared: result });
      return send(result, opts);
    },
    submitPrepared: (result, opts = {}) => send(result, opts),
    reconcile,
    trackReveals,
    beacon,
  };
}
