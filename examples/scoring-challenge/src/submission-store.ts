/**
 * The submissions table as the routes and the pipeline read and write it: one accepted bundle a
 * row, its status record (the spec's field names), and the lazy expiry of held bundles. Times
 * and epochs come from the database's clock, so replicas and workers agree on them.
 */
import { pgSafeJson, pgSafeText, type Sql, type TransactionSql } from "@platform/challenge-sdk";
import type { SubmissionState, SubmissionStatus } from "./api-schemas.js";

/** A held bundle older than this is rejected: the LLM review never decided, so it never runs. */
export const HELD_EXPIRY_HOURS = 24;

/** What a new submission stores. */
export interface NewSubmission {
  hotkey: string;
  via: "signed" | "bridge";
  requestHash: string | null;
  filename: string;
  codeHash: string;
  zip: Buffer;
  metadata: Record<string, unknown>;
  llmGate: "required" | "off";
  architectureHash: string;
  trainingHash: string;
  epochSeconds: number;
}

interface StatusRow {
  id: string;
  hotkey: string;
  epoch_id: string | number;
  status: SubmissionState;
  code_hash: string;
  filename: string;
  created_at: Date;
  updated_at: Date;
  error: string | null;
  final_score: number | null;
  anti_cheat_multiplier: number | null;
  bpb: number | null;
  llm_gate: "required" | "off";
  q_arch: number | null;
  q_recipe: number | null;
  diversity_bonus: number | null;
  penalty: number | null;
}

/** The status record of a row (bigint epoch as a number, ids as strings). */
function toStatus(row: StatusRow): SubmissionStatus {
  return {
    ...row,
    id: String(row.id),
    epoch_id: Number(row.epoch_id),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/**
 * Store a submission, pending, in the epoch the database's clock is in now. Call it inside the
 * transaction that enqueues its job, so neither exists without the other. The miner's text
 * (metadata, file name) is cleaned of what PostgreSQL refuses (NUL, lone surrogates): a JSON
 * body may carry `\u0000`, which would otherwise fail the insert with a 500.
 */
export async function insertSubmission(
  sql: Sql | TransactionSql,
  row: NewSubmission,
): Promise<SubmissionStatus> {
  const [inserted] = await sql<StatusRow[]>`
    insert into submissions (hotkey, epoch_id, via, request_hash, filename, code_hash, bundle,
                             metadata, llm_gate, architecture_hash, training_hash)
    values (${row.hotkey}, floor(extract(epoch from now()) / ${row.epochSeconds})::bigint,
            ${row.via}, ${row.requestHash}, ${pgSafeText(row.filename)}, ${row.codeHash}, ${row.zip},
            ${sql.json(pgSafeJson(row.metadata) as never)}, ${row.llmGate}, ${row.architectureHash},
            ${row.trainingHash})
    returning id::text, hotkey, epoch_id, status, code_hash, filename, created_at, updated_at,
              error, final_score, anti_cheat_multiplier, bpb, llm_gate, q_arch, q_recipe,
              diversity_bonus, penalty`;
  return toStatus(inserted!);
}

/** The status record of submission `id`, or null. */
export async function readSubmission(sql: Sql, id: string): Promise<SubmissionStatus | null> {
  const [row] = await sql<StatusRow[]>`
    select id::text, hotkey, epoch_id, status, code_hash, filename, created_at, updated_at,
           error, final_score, anti_cheat_multiplier, bpb, llm_gate, q_arch, q_recipe,
           diversity_bonus, penalty
    from submissions where id = ${id}::bigint`;
  return row ? toStatus(row) : null;
}

/**
 * Reject every bundle held longer than HELD_EXPIRY_HOURS. Applied lazily (on reads, by
 * process-next and by the worker), so no timer has to be running for the rule to hold.
 * Returns how many it rejected.
 */
export async function expireHeld(sql: Sql): Promise<number> {
  const rows = await sql`
    update submissions
    set status = 'rejected',
        error = ${`rejected: the LLM review could not decide within ${HELD_EXPIRY_HOURS} h`}::text
          || coalesce(' (' || error || ')', '')
    where status = 'held'
      and held_at <= now() - make_interval(hours => ${HELD_EXPIRY_HOURS})
    returning id`;
  return rows.length;
}
