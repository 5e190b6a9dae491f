import {
  loadMigrations,
  type Migration,
  type Sql,
  type TransactionSql,
  type WeightsSnapshot,
} from "@platform/core";
import type { BlockRef } from "./chain-client.js";

/**
 * Where an attempt stands. A set_weights attempt ends `finalized`, `failed` or `dropped`; a commit
 * (commit-reveal v4) becomes `committed` once the chain holds it, then `revealed` or
 * `unrevealed`, or ends `failed` / `dropped` like any extrinsic.
 */
export type SubmissionStatus =
  | "pending"
  | "in_block"
  | "finalized"
  | "failed"
  | "dropped"
  | "committed"
  | "revealed"
  | "unrevealed";

/** What an attempt sends: `set_weights`, or `commit_timelocked_weights` (commit-reveal v4). */
export type SubmissionKind = "set_weights" | "commit";

/**
 * Why a commit was not revealed, as far as the chain shows it:
 * - `pulse_missing`: the drand pulse of its round was never stored by the end of its reveal
 *   epoch (the beacon skipped the round, or the chain did not ingest it)
 * - `pulse_late`: the pulse was stored only as the reveal epoch ended
 * - `epoch_moved`: the reveal epoch ended before the block its round was aimed at, by the
 *   schedule when it was included: the subnet's epochs were brought forward after it was signed
 *   (an owner-triggered epoch on the counter model), not the beacon's fault
 * - `decryption_failed`: it was taken out in its reveal epoch without an event, and it was
 *   encrypted to another beacon key than the chain's `Drand.BeaconConfig`
 * - `stake_too_low`: taken out without an event, and the hotkey's stake was below StakeThreshold
 *   then (the chain checks the minimum stake again when it reveals)
 * - `payload_refused`: taken out without an event, and the weights fail `set_weights`' checks
 *   as the chain stood then (`reveal_detail` names the check)
 * - `dropped_at_reveal`: taken out without an event for a reason the chain only logs (its
 *   decryption or decoding failed)
 * - `weights_differ`: the reveal event is there but the chain's Weights are not the committed ones
 * - `ambiguous`: several commits of this hotkey were taken out in one block and fewer revealed
 * - `unverifiable`: the node no longer has the state to tell
 */
export type RevealCause =
  | "pulse_missing"
  | "pulse_late"
  | "epoch_moved"
  | "decryption_failed"
  | "stake_too_low"
  | "payload_refused"
  | "dropped_at_reveal"
  | "weights_differ"
  | "ambiguous"
  | "unverifiable";

/** A commit's own fields (null for a set_weights attempt). */
export interface CommitDetail {
  /** 0x blake2_256 of the commit bytes: the hash of TimelockedWeightsCommitted. */
  hash: string;
  /** The drand round it is locked to. */
  revealRound: number;
  /**
   * The epoch it is stored under in `TimelockedWeightCommits` (expected when sent, then the one
   * the including block gave it), and the epoch it is due to be revealed in.
   */
  commitEpoch: number | null;
  revealEpoch: number | null;
  /** 0x hex of the beacon public key it was encrypted to. */
  beaconPublicKey: string;
  /** The block that revealed it, or (unrevealed) the block it left the chain's storage. */
  revealBlock: BlockRef | null;
  /** For `unrevealed`: the likely cause, and what the chain showed. */
  cause: RevealCause | null;
  detail: string | null;
  /** For `unrevealed`: the next commit the chain accepted, which carried the weights again. */
  recommitId: number | null;
}

/** Statuses a row can still leave (an attempt the chain may yet include). */
export const OPEN_STATUSES: readonly SubmissionStatus[] = ["pending", "in_block"];

/** One set_weights or commit attempt, as stored in `chain_weight_submissions`. */
export interface SubmissionRecord {
  id: number;
  kind: SubmissionKind;
  snapshotId: number | null;
  netuid: number;
  /** The validator's hotkey (SS58). */
  hotkey: string;
  /** Its uid at `builtBlock`, null when it was not registered. */
  uid: number | null;
  /** The finalized block the vector was built at. */
  builtBlock: BlockRef;
  extrinsicHash: string;
  nonce: number;
  /** The mortal era: the extrinsic can only be included in blocks birth+1 .. death-1. */
  eraBirth: number;
  eraDeath: number;
  inBlock: BlockRef | null;
  finalizedBlock: BlockRef | null;
  status: SubmissionStatus;
  /** `module` (dispatch error in the block), a JSON-RPC code such as `1010` (pool refusal), or a pool status. */
  errorCode: string | null;
  /** The decoded error: `SettingWeightsTooFast`, `Transaction is outdated`, `era expired`... */
  errorName: string | null;
  errorMessage: string | null;
  uids: number[];
  weights: number[];
  versionKey: bigint;
  /** The commit's fields, for kind `commit`; null for set_weights. */
  commit: CommitDetail | null;
  createdAt: Date;
  updatedAt: Date;
}

/** What is known of an attempt when it is recorded (before it is sent). */
export interface NewSubmission {
  snapshotId: number | null;
  netuid: number;
  hotkey: string;
  uid: number | null;
  builtBlock: BlockRef;
  extrinsicHash: string;
  nonce: number;
  eraBirth: number;
  eraDeath: number;
  uids: readonly number[];
  weights: readonly number[];
  versionKey: bigint;
  /** A commit: its hash, round, expected epochs and beacon key (absent for set_weights). */
  commit?: {
    hash: string;
    revealRound: number;
    commitEpoch: number;
    revealEpoch: number;
    beaconPublicKey: string;
  };
}

/**
 * A final outcome of the extrinsic: the block (for finalized/committed/failed in a block) and the
 * error, if any. `committed` (a commit the chain holds) also gives the epochs it got.
 */
export interface Settlement {
  status: "finalized" | "failed" | "dropped" | "committed";
  block?: BlockRef | null;
  error?: { code: string; name: string; message?: string | null } | null;
  /** For `committed`: the epoch the including block stored it under, and its reveal epoch. */
  epochs?: { commitEpoch: number; revealEpoch: number };
}

/** How a commit's reveal ended. */
export interface RevealSettlement {
  status: "revealed" | "unrevealed";
  /** The revealing block, or the one where the commit left the chain's storage. */
  block: BlockRef | null;
  cause?: RevealCause | null;
  detail?: string | null;
}

/** Another attempt by the same hotkey on the same subnet is still open. */
export class OpenAttemptError extends Error {
  override readonly name = "OpenAttemptError";
  readonly open: SubmissionRecord | undefined;

  constructor(open: SubmissionRecord | undefined) {
    super(
      `an earlier set_weights attempt${open ? ` (#${open.id}, ${open.extrinsicHash})` : ""} is still open; reconcile it first`,
    );
    this.open = open;
  }
}

interface Row {
  id: string | number;
  snapshot_id: string | number | null;
  netuid: number;
  hotkey: string;
  uid: number | null;
  built_block_number: string | number;
  built_block_hash: string;
  extrinsic_hash: string;
  nonce: string | number;
  era_birth: string | number;
  era_death: string | number;
  in_block_number: string | number | null;
  in_block_hash: string | null;
  finalized_block_number: string | number | null;
  finalized_block_hash: string | null;
  status: SubmissionStatus;
  error_code: string | null;
  error_name: string | null;
  error_message: string | null;
  uids: number[];
  weights_u16: number[];
  version_key: string;
  kind: SubmissionKind;
  commit_hash: string | null;
  reveal_round: string | number | null;
  commit_epoch: string | number | null;
  reveal_epoch: string | number | null;
  beacon_public_key: string | null;
  reveal_block_number: string | number | null;
  reveal_block_hash: string | null;
  reveal_cause: RevealCause | null;
  reveal_detail: string | null;
  recommit_id: string | number | null;
  created_at: Date;
  updated_at: Date;
}

const num = (value: string | number | null): number | null =>
  value === null ? null : Number(value);

const block = (number: string | number | null, hash: string | null): BlockRef | null =>
  number === null || hash === null ? null : { number: Number(number), hash };

// bigint columns arrive as strings from postgres.js; block numbers and ids stay below 2^53.
function fromRow(row: Row): SubmissionRecord {
  return {
    id: Number(row.id),
    kind: row.kind,
    snapshotId: row.snapshot_id === null ? null : Number(row.snapshot_id),
    netuid: row.netuid,
    hotkey: row.hotkey,
    uid: row.uid,
    builtBlock: { number: Number(row.built_block_number), hash: row.built_block_hash },
    extrinsicHash: row.extrinsic_hash,
    nonce: Number(row.nonce),
    eraBirth: Number(row.era_birth),
    eraDeath: Number(row.era_death),
    inBlock: block(row.in_block_number, row.in_block_hash),
    finalizedBlock: block(row.finalized_block_number, row.finalized_block_hash),
    status: row.status,
    errorCode: row.error_code,
    errorName: row.error_name,
    errorMessage: row.error_message,
    uids: row.uids,
    weights: row.weights_u16,
    versionKey: BigInt(row.version_key),
    commit:
      row.kind === "commit"
        ? {
            hash: row.commit_hash ?? "",
            revealRound: Number(row.reveal_round),
            commitEpoch: num(row.commit_epoch),
            revealEpoch: num(row.reveal_epoch),
            beaconPublicKey: row.beacon_public_key ?? "",
            revealBlock: block(row.reveal_block_number, row.reveal_block_hash),
            cause: row.reveal_cause,
            detail: row.reveal_detail,
            recommitId: num(row.recommit_id),
          }
        : null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * The validator's tables: this package's `migrations/` (`0005_chain_submissions.sql`,
 * `0006_commit_reveal.sql`). A standalone validator applies them to its own database under its
 * own namespace, e.g. `migrate(sql, { namespace: "validator", migrations })`; the master applies
 * the very same files as its versions 5 and 6, so the two can never drift. Their numbers are in
 * the master's sequence: a new one here takes the next number free in both folders.
 * This file sits directly under src/, and tsup bundles it into dist/index.js, one level under the
 * package root in both cases, so the same relative URL finds them from the sources and the build.
 */
export function validatorMigrations(): Promise<Migration[]> {
  return loadMigrations(new URL("../migrations/", import.meta.url));
}

/**
 * The validator's record of set_weights and commit attempts (`chain_weight_submissions`), and the
 * last snapshot it verified (`validator_snapshots`). Every change is one transaction that locks
 * the row and only moves it forward (a final status never changes; `committed` only moves on to
 * `revealed` or `unrevealed`); at most one attempt per (netuid, hotkey) is open at a time,
 * enforced by a unique index.
 */
export class SubmissionStore {
  constructor(private readonly sql: Sql) {}

  /** Records a signed, not yet sent, attempt as `pending`; throws OpenAttemptError if one is open. */
  async insertPending(input: NewSubmission): Promise<SubmissionRecord> {
    const json = (value: unknown) => this.sql.json(value as never);
    const commit = input.commit;
    try {
      return await this.sql.begin(async (tx) => {
        const [row] = await tx<Row[]>`
          insert into chain_weight_submissions (
            snapshot_id, netuid, hotkey, uid, built_block_number, built_block_hash,
            extrinsic_hash, nonce, era_birth, era_death, status, uids, weights_u16, version_key,
            kind, commit_hash, reveal_round, commit_epoch, reveal_epoch, beacon_public_key
          ) values (
            ${input.snapshotId}, ${input.netuid}, ${input.hotkey}, ${input.uid},
            ${input.builtBlock.number}, ${input.builtBlock.hash}, ${input.extrinsicHash},
            ${input.nonce}, ${input.eraBirth}, ${input.eraDeath}, 'pending',
            ${json([...input.uids])}, ${json([...input.weights])}, ${input.versionKey.toString()},
            ${commit ? "commit" : "set_weights"}, ${commit?.hash ?? null},
            ${commit?.revealRound ?? null}, ${commit?.commitEpoch ?? null},
            ${commit?.revealEpoch ?? null}, ${commit?.beaconPublicKey ?? null}
          )
          returning *`;
        return fromRow(row as Row);
      });
    } catch (error) {
      if ((error as { code?: string }).code === "23505") {
        const [open] = await this.open(input.netuid, input.hotkey);
        throw new OpenAttemptError(open);
      }
      throw error;
    }
  }

  /** `pending` -> `in_block` at `at` (also a move to another block after a reorg). */
  markInBlock(id: number, at: BlockRef): Promise<SubmissionRecord> {
    return this.#move(
      id,
      ["pending", "in_block"],
      (tx) => tx`
        update chain_weight_submissions
        set status = 'in_block', in_block_number = ${at.number}, in_block_hash = ${at.hash},
            updated_at = now()
        where id = ${id}
        returning *`,
    );
  }

  /** `in_block` -> `pending`: its block was retracted. */
  markRetracted(id: number): Promise<SubmissionRecord> {
    return this.#move(
      id,
      ["pending", "in_block"],
      (tx) => tx`
        update chain_weight_submissions
        set status = 'pending', in_block_number = null, in_block_hash = null, updated_at = now()
        where id = ${id}
        returning *`,
    );
  }

  /**
   * An open attempt's final outcome. A row already final is returned unchanged. A commit the
   * chain holds settles as `committed` (never `finalized`), a set_weights never as `committed`.
   */
  settle(id: number, outcome: Settlement): Promise<SubmissionRecord> {
    const at = outcome.block ?? null;
    const error = outcome.error ?? null;
    const epochs = outcome.epochs ?? null;
    return this.#move(
      id,
      OPEN_STATUSES,
      (tx) => tx`
        update chain_weight_submissions
        set status = case
              when kind = 'commit' and ${outcome.status} in ('finalized', 'committed') then 'committed'
              when kind = 'set_weights' and ${outcome.status} = 'committed' then 'finalized'
              else ${outcome.status}
            end,
            in_block_number = coalesce(${at?.number ?? null}, in_block_number),
            in_block_hash = coalesce(${at?.hash ?? null}, in_block_hash),
            finalized_block_number = ${at?.number ?? null},
            finalized_block_hash = ${at?.hash ?? null},
            error_code = ${error?.code ?? null},
            error_name = ${error?.name ?? null},
            error_message = ${error?.message ?? null},
            commit_epoch = coalesce(${epochs?.commitEpoch ?? null}, commit_epoch),
            reveal_epoch = coalesce(${epochs?.revealEpoch ?? null}, reveal_epoch),
            updated_at = now()
        where id = ${id}
        returning *`,
    );
  }

  /**
   * A committed commit's reveal outcome (`committed` -> `revealed` | `unrevealed`). An
   * unrevealed one is linked to the next commit the chain accepted, if there is one already.
   * A row not `committed` is returned unchanged.
   */
  settleReveal(id: number, outcome: RevealSettlement): Promise<SubmissionRecord> {
    const at = outcome.block;
    return this.#move(
      id,
      ["committed"],
      (tx) => tx`
        update chain_weight_submissions as s
        set status = ${outcome.status},
            reveal_block_number = ${at?.number ?? null},
            reveal_block_hash = ${at?.hash ?? null},
            reveal_cause = ${outcome.cause ?? null},
            reveal_detail = ${outcome.detail ?? null},
            recommit_id = case when ${outcome.status} = 'unrevealed' then (
              select min(n.id) from chain_weight_submissions n
              where n.netuid = s.netuid and n.hotkey = s.hotkey and n.kind = 'commit'
                and n.id > s.id and n.status in ('committed', 'revealed', 'unrevealed')
            ) end,
            updated_at = now()
        where id = ${id}
        returning *`,
    );
  }

  /**
   * Links every unrevealed commit of the hotkey that has no recommit yet, and is older than the
   * committed one `id`, to it. Returns the ids linked.
   */
  async linkRecommit(id: number): Promise<number[]> {
    const rows = await this.sql<{ id: string | number }[]>`
      update chain_weight_submissions as s
      set recommit_id = ${id}, updated_at = now()
      from chain_weight_submissions n
      where n.id = ${id} and n.kind = 'commit' and n.status in ('committed', 'revealed', 'unrevealed')
        and s.netuid = n.netuid and s.hotkey = n.hotkey and s.kind = 'commit'
        and s.status = 'unrevealed' and s.recommit_id is null and s.id < n.id
      returning s.id`;
    return rows.map((r) => Number(r.id));
  }

  /** Committed commits whose reveal is still awaited, oldest first. */
  async awaitingReveal(netuid: number, hotkey: string): Promise<SubmissionRecord[]> {
    const rows = await this.sql<Row[]>`
      select * from chain_weight_submissions
      where netuid = ${netuid} and hotkey = ${hotkey} and status = 'committed'
      order by id`;
    return rows.map(fromRow);
  }

  /**
   * Commits of the hotkey the chain holds or may still hold, stored (or expected to be stored)
   * under `epoch`: open, committed, revealed or unrevealed.
   */
  async commitsForEpoch(
    netuid: number,
    hotkey: string,
    epoch: number,
  ): Promise<SubmissionRecord[]> {
    const rows = await this.sql<Row[]>`
      select * from chain_weight_submissions
      where netuid = ${netuid} and hotkey = ${hotkey} and kind = 'commit' and commit_epoch = ${epoch}
        and status in ('pending', 'in_block', 'committed', 'revealed', 'unrevealed')
      order by id`;
    return rows.map(fromRow);
  }

  /** The newest revealed commit of a hotkey on a subnet. */
  async lastRevealed(netuid: number, hotkey: string): Promise<SubmissionRecord | undefined> {
    const [row] = await this.sql<Row[]>`
      select * from chain_weight_submissions
      where netuid = ${netuid} and hotkey = ${hotkey} and status = 'revealed'
      order by id desc
      limit 1`;
    return row ? fromRow(row) : undefined;
  }

  /** Keeps `snapshot` as the last one this validator verified for the subnet. */
  async saveVerifiedSnapshot(
    netuid: number,
    hotkey: string,
    snapshot: WeightsSnapshot,
  ): Promise<void> {
    await this.sql`
      insert into validator_snapshots (netuid, hotkey, snapshot_id, snapshot)
      values (${netuid}, ${hotkey}, ${snapshot.id}, ${this.sql.json(snapshot as never)})
      on conflict (netuid, hotkey) do update
        set snapshot_id = excluded.snapshot_id, snapshot = excluded.snapshot, verified_at = now()`;
  }

  /** The last snapshot this validator verified for the subnet, and when. */
  async lastVerifiedSnapshot(
    netuid: number,
    hotkey: string,
  ): Promise<{ snapshot: WeightsSnapshot; verifiedAt: Date } | undefined> {
    const [row] = await this.sql<{ snapshot: WeightsSnapshot; verified_at: Date }[]>`
      select snapshot, verified_at from validator_snapshots
      where netuid = ${netuid} and hotkey = ${hotkey}`;
    return row ? { snapshot: row.snapshot, verifiedAt: row.verified_at } : undefined;
  }

  /** One attempt by id. */
  async get(id: number): Promise<SubmissionRecord | undefined> {
    const [row] = await this.sql<Row[]>`select * from chain_weight_submissions where id = ${id}`;
    return row ? fromRow(row) : undefined;
  }

  /** The open attempts (pending, in_block) of a hotkey on a subnet, oldest first. */
  async open(netuid: number, hotkey: string): Promise<SubmissionRecord[]> {
    const rows = await this.sql<Row[]>`
      select * from chain_weight_submissions
      where netuid = ${netuid} and hotkey = ${hotkey} and status in ('pending', 'in_block')
      order by id`;
    return rows.map(fromRow);
  }

  /** The newest attempts, newest first (`platform validator status`). */
  async recent(
    options: { netuid?: number; hotkey?: string; limit?: number } = {},
  ): Promise<SubmissionRecord[]> {
    const limit = Math.min(Math.max(options.limit ?? 20, 1), 1000);
    const rows = await this.sql<Row[]>`
      select * from chain_weight_submissions
      where (${options.netuid ?? null}::integer is null or netuid = ${options.netuid ?? null})
        and (${options.hotkey ?? null}::text is null or hotkey = ${options.hotkey ?? null})
      order by id desc
      limit ${limit}`;
    return rows.map(fromRow);
  }

  /**
   * The newest attempt whose weights are confirmed on chain: a `finalized` set_weights or a
   * `revealed` commit (its `commit.revealBlock` is where the weights landed).
   */
  async lastConfirmed(netuid: number, hotkey: string): Promise<SubmissionRecord | undefined> {
    const [row] = await this.sql<Row[]>`
      select * from chain_weight_submissions
      where netuid = ${netuid} and hotkey = ${hotkey} and status in ('finalized', 'revealed')
      order by id desc
      limit 1`;
    return row ? fromRow(row) : undefined;
  }

  // Locks the row; applies `update` only from one of `from`, otherwise returns the row as it is.
  async #move(
    id: number,
    from: readonly SubmissionStatus[],
    update: (tx: TransactionSql) => Promise<Row[]>,
  ): Promise<SubmissionRecord> {
    return this.sql.begin(async (tx) => {
      const [current] = await tx<Row[]>`
        select * from chain_weight_submissions where id = ${id} for update`;
      if (!current) throw new Error(`no chain_weight_submissions row ${id}`);
      if (!from.includes(current.status)) return fromRow(current);
      const [row] = await update(tx);
      return fromRow(row as Row);
    });
  }
}
