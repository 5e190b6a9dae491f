import { createLogger, type Logger, type Sql, type WeightsSnapshot } from "@platform/core";
import type { IKeyringPair } from "@polkadot/types/types";
import { u8aToHex } from "@polkadot/util";
import { createFollower } from "./_follow-extrinsic.js";
import { createReconciler } from "./_reconcile-attempts.js";
import { createSender } from "./_send-attempt.js";
import type { ChainClient } from "./chain-client.js";
import {
  type BeaconChoice,
  COMMIT_REVEAL_VERSION,
  type CommitPlan,
  type CommitState,
  MAX_UNREVEALED_COMMITS,
  planCommit,
  readCommitState,
  resolveBeacon,
  trackReveal,
} from "./commit-reveal.js";
import { type EpochModelKind, firstCommitBlockOfEpoch } from "./epoch-model.js";
import { type SubmissionKind, type SubmissionRecord, SubmissionStore } from "./submission-store.js";
import {
  BURN_UID,
  type BuiltWeights,
  buildWeights,
  checkCommitTimelocked,
  checkSetWeights,
  type LocalCheck,
  LocalCheckError,
  readSubnetRules,
  type SubnetRules,
} from "./subnet-rules.js";
import { timelockEncrypt } from "./timelock.js";

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
let timelockWarm = false;

// The first timelock encryption of a process builds the curve library's tables (about half a
// second); done at start, the first commit does not spend that out of its round's margin (6
// blocks: 72 s on finney, but 600 ms on a fast test chain).
function warmTimelock(publicKey: Uint8Array): void {
  if (timelockWarm) return;
  timelockWarm = true;
  timelockEncrypt(new Uint8Array(1), 1, publicKey);
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
  // Its parts: settling attempts from the chain, following a sent one, sending one.
  const context = { client, netuid, hotkey, store, log, emit, settleTimeoutMs };
  const reconciler = createReconciler(context);
  const { reconcile } = reconciler;
  const follow = createFollower(context, reconciler);
  const send = createSender(context, { keypair, eraPeriod, reconciler, follow });

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
    const next = firstCommitBlockOfEpoch(state.schedule, state.targetEpoch + 1);
    return next === undefined
      ? { ok: false, check: "CommittedThisEpoch" }
      : { ok: false, check: "CommittedThisEpoch", allowedFrom: next };
  };

  // The epoch model is the runtime's: logged when first seen and whenever an upgrade changes it.
  let seenModel: { model: EpochModelKind; specVersion: number } | undefined;
  const noteModel = (state: CommitState) => {
    const { model, specVersion } = state.schedule;
    if (seenModel?.model === model && seenModel.specVersion === specVersion) return;
    const fields = { netuid, model, specVersion, block: state.best.number };
    if (seenModel && seenModel.model !== model) {
      log.warn("the runtime changed its epoch model; commits follow the new one", {
        ...fields,
        previous: seenModel.model,
        previousSpecVersion: seenModel.specVersion,
      });
    } else log.info("epoch model chosen by the runtime", fields);
    seenModel = { model, specVersion };
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
    noteModel(state);
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
    const rules = await readSubnetRules(client, netuid, {
      signal: opts.signal,
      hotkey: keypair.publicKey,
    });
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
      const rules = await readSubnetRules(client, netuid, {
        signal: opts.signal,
        hotkey: keypair.publicKey,
      });
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
