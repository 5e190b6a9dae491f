import type { Migration, Sql, TransactionSql } from "@platform/core";
import { masterMigrations } from "../migrations.js";
import type { BlockRef } from "./chain-client.js";

/** Where an attempt stands; `finalized`, `failed` and `dropped` are final. */
export type SubmissionStatus = "pending" | "in_block" | "finalized" | "failed" | "dropped";

/** Statuses a row can still leave (an attempt the chain may yet include). */
export const OPEN_STATUSES: readonly SubmissionStatus[] = ["pending", "in_block"];

/** One set_weights attempt, as stored in `chain_weight_submissions`. */
export interface SubmissionRecord {
  id: number;
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
}

/** A final outcome: the block (for finalized/failed in a block) and the error, if any. */
export interface Settlement {
  status: "finalized" | "failed" | "dropped";
  block?: BlockRef | null;
  error?: { code: string; name: string; message?: string | null } | null;
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
  created_at: Date;
  updated_at: Date;
}

const block = (number: string | number | null, hash: string | null): BlockRef | null =>
  number === null || hash === null ? null : { number: Number(number), hash };

// bigint columns arrive as strings from postgres.js; block numbers and ids stay below 2^53.
function fromRow(row: Row): SubmissionRecord {
  return {
    id: Number(row.id),
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
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Names of the master migrations a standalone validator applies to its own database. */
export const VALIDATOR_MIGRATION_NAMES: readonly string[] = ["chain_submissions"];

/**
 * The migrations a standalone validator applies to its own database: the master's
 * `0005_chain_submissions.sql` (the same file, so the two can never drift), run under the
 * validator's own namespace, e.g. `migrate(sql, { namespace: "validator", migrations })`.
 */
export async function validatorMigrations(): Promise<Migration[]> {
  const all = await masterMigrations();
  return all.filter((m) => VALIDATOR_MIGRATION_NAMES.includes(m.name));
}

/**
 * The validator's record of set_weights attempts (`chain_weight_submissions`). Every change is
 * one transaction that locks the row and only moves it forward (a final status never changes);
 * at most one attempt per (netuid, hotkey) is open at a time, enforced by a unique index.
 */
export class SubmissionStore {
  constructor(private readonly sql: Sql) {}

  /** Records a signed, not yet sent, attempt as `pending`; throws OpenAttemptError if one is open. */
  async insertPending(input: NewSubmission): Promise<SubmissionRecord> {
    const json = (value: unknown) => this.sql.json(value as never);
    try {
      return await this.sql.begin(async (tx) => {
        const [row] = await tx<Row[]>`
          insert into chain_weight_submissions (
            snapshot_id, netuid, hotkey, uid, built_block_number, built_block_hash,
            extrinsic_hash, nonce, era_birth, era_death, status, uids, weights_u16, version_key
          ) values (
            ${input.snapshotId}, ${input.netuid}, ${input.hotkey}, ${input.uid},
            ${input.builtBlock.number}, ${input.builtBlock.hash}, ${input.extrinsicHash},
            ${input.nonce}, ${input.eraBirth}, ${input.eraDeath}, 'pending',
            ${json([...input.uids])}, ${json([...input.weights])}, ${input.versionKey.toString()}
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

  /** An open attempt's final outcome. A row already final is returned unchanged. */
  settle(id: number, outcome: Settlement): Promise<SubmissionRecord> {
    const at = outcome.block ?? null;
    const error = outcome.error ?? null;
    return this.#move(
      id,
      OPEN_STATUSES,
      (tx) => tx`
        update chain_weight_submissions
        set status = ${outcome.status},
            in_block_number = coalesce(${at?.number ?? null}, in_block_number),
            in_block_hash = coalesce(${at?.hash ?? null}, in_block_hash),
            finalized_block_number = ${at?.number ?? null},
            finalized_block_hash = ${at?.hash ?? null},
            error_code = ${error?.code ?? null},
            error_name = ${error?.name ?? null},
            error_message = ${error?.message ?? null},
            updated_at = now()
        where id = ${id}
        returning *`,
    );
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

  /** The newest finalized (confirmed) attempt of a hotkey on a subnet. */
  async lastConfirmed(netuid: number, hotkey: string): Promise<SubmissionRecord | undefined> {
    const [row] = await this.sql<Row[]>`
      select * from chain_weight_submissions
      where netuid = ${netuid} and hotkey = ${hotkey} and status = 'finalized'
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
