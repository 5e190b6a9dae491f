/**
 * Eval-job rows: one per submission and pipeline level (`gates`: static gates and contract, then
 * duplicates; `llm`: the LLM review; `run`: the scored run), with the attempts each level took,
 * how many of them failed on the platform's side and the last such error.
 * They are what GET /v1/health/eval-jobs shows; the SDK's job queue does the claiming.
 *
 * A row's status says whether the level reached a decision, not what the decision was:
 * `completed` (it decided, allow or refuse, scored or failed by the bundle), `failed` (it could
 * not decide: the LLM review held the bundle), `pending` (an infrastructure failure sent it
 * back to the queue), `running`.
 */
import { pgSafeText, type Sql, type TransactionSql } from "@platform/challenge-sdk";
import type { EvalLevel } from "./api-schemas.js";

/** A level's status. */
export type EvalJobStatus = "pending" | "running" | "completed" | "failed";

/** Most rows one listing returns. */
export const MAX_EVAL_JOBS_LISTED = 200;

/** Level `level` of `submissionId` starts an attempt. */
export async function startLevel(
  sql: Sql | TransactionSql,
  submissionId: string,
  level: EvalLevel,
): Promise<void> {
  await sql`
    insert into eval_jobs (submission_id, level, status, attempts)
    values (${submissionId}::bigint, ${level}, 'running', 1)
    on conflict (submission_id, level)
    do update set status = 'running', attempts = eval_jobs.attempts + 1`;
}

/** Level `level` of `submissionId` ends its attempt as `status`. */
export async function endLevel(
  sql: Sql | TransactionSql,
  submissionId: string,
  level: EvalLevel,
  status: Exclude<EvalJobStatus, "running">,
): Promise<void> {
  await sql`
    update eval_jobs set status = ${status}
    where submission_id = ${submissionId}::bigint and level = ${level}`;
}

/** Longest `last_error` kept on a row (the column's check). */
export const MAX_LAST_ERROR_CHARS = 2000;

/**
 * Count a failure of the platform at `level` of `submissionId` and keep its sentence as the
 * row's `last_error` (cleaned for PostgreSQL: it may quote the bundle's text). The row is created
 * when the failure came before the level started.
 */
export async function recordFailure(
  sql: Sql | TransactionSql,
  submissionId: string,
  level: EvalLevel,
  error: string,
): Promise<void> {
  const text = pgSafeText(
    error.length > MAX_LAST_ERROR_CHARS ? `${error.slice(0, MAX_LAST_ERROR_CHARS - 1)}…` : error,
  );
  await sql`
    insert into eval_jobs (submission_id, level, status, attempts, failures, last_error)
    values (${submissionId}::bigint, ${level}, 'pending', 0, 1, ${text})
    on conflict (submission_id, level)
    do update set failures = eval_jobs.failures + 1, last_error = excluded.last_error`;
}

/** Every level of `submissionId` still marked running goes back to pending (requeued). */
export async function requeueLevels(
  sql: Sql | TransactionSql,
  submissionId: string,
): Promise<void> {
  await sql`
    update eval_jobs set status = 'pending'
    where submission_id = ${submissionId}::bigint and status = 'running'`;
}

/** The most recently started rows, newest first. */
export async function recentEvalJobs(sql: Sql, limit: number) {
  return sql<
    {
      id: string;
      submission_id: string;
      level: EvalLevel;
      status: EvalJobStatus;
      attempts: number;
      failures: number;
      last_error: string | null;
      created_at: Date;
      updated_at: Date;
    }[]
  >`
    select id::text, submission_id::text, level, status, attempts, failures, last_error,
           created_at, updated_at
    from eval_jobs
    order by updated_at desc, id desc
    limit ${Math.min(Math.max(1, limit), MAX_EVAL_JOBS_LISTED)}`;
}
