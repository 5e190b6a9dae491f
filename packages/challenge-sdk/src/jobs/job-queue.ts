import { activeTraceparent, type Sql, type TransactionSql } from "@platform/core";
import { errorText } from "./job-error.js";

/** Where a job is in its life. `pending` includes jobs waiting for their `runAt` (a retry). */
export type JobStatus = "pending" | "running" | "completed" | "dead" | "cancelled";

/** One job as stored. `leaseOwner` is the worker that claimed it last (and completed it, if it did). */
export interface Job<P = unknown, R = unknown> {
  id: string;
  queue: string;
  key: string | null;
  payload: P;
  status: JobStatus;
  priority: number;
  /** Claims so far, the current one included. */
  attempts: number;
  maxAttempts: number;
  /** Not claimable before this time. */
  runAt: Date;
  /** The fencing number of the latest claim. */
  leaseToken: number;
  leaseOwner: string | null;
  leaseExpiresAt: Date | null;
  lastError: string | null;
  result: R | null;
  createdAt: Date;
  updatedAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  /**
   * The W3C `traceparent` of the span that enqueued it (tracing on), which the worker's span
   * continues; null otherwise.
   */
  traceParent: string | null;
}

/** A job this worker holds: pass it back to heartbeat, complete, fail or release. */
export interface ClaimedJob<P = unknown, R = unknown> extends Job<P, R> {
  status: "running";
  leaseOwner: string;
  leaseExpiresAt: Date;
  /** The lease length it was claimed with; heartbeats extend by this much. */
  leaseSeconds: number;
}

/** What fences a call: the job and the lease token of the claim that is acting on it. */
export interface JobLease {
  id: string;
  leaseToken: number;
  leaseSeconds?: number;
}

/** Options of `enqueue`. */
export interface EnqueueOptions {
  /** Idempotency key: enqueueing the same key again returns the existing job, whatever its status. */
  key?: string;
  /** Claims allowed before the job is `dead` (default 5, at most 1000). */
  maxAttempts?: number;
  /** Not claimable before this time. */
  runAt?: Date;
  /** Not claimable for this many seconds (instead of `runAt`). */
  delaySeconds?: number;
  /** Higher is claimed first (default 0). */
  priority?: number;
  /** Enqueue inside this transaction, so the job exists exactly when the caller's rows do. */
  tx?: Sql | TransactionSql;
}

/** Answer of `enqueue`: the job's id, and whether this call created it (false: the key existed). */
export interface EnqueueResult {
  id: string;
  created: boolean;
}

/** Options of `claim`. */
export interface ClaimOptions {
  /** Who holds the lease (shown as `leaseOwner`). */
  workerId: string;
  /** Lease length; the holder must heartbeat within it (default: the queue's, 30 s). */
  leaseSeconds?: number;
}

/** Options of `fail`. */
export interface FailOptions {
  /** false: dead now, whatever attempts are left (default true). */
  retryable?: boolean;
  /** Wait at least this long before the next attempt (a Retry-After). */
  delaySeconds?: number;
}

/** Answer of `fail`: retried later (`pending` with its `runAt`) or `dead`. */
export type FailResult =
  | { status: "pending"; runAt: Date; attempts: number }
  | { status: "dead"; attempts: number };

/** Number of jobs of the queue in each status. */
export type JobStats = Record<JobStatus, number>;

/** Options of `list`. */
export interface ListJobsOptions {
  status?: JobStatus;
  /** At most this many (default 50, at most 1000). */
  limit?: number;
  /** Only jobs with a smaller id: pass the last id of the previous page. */
  beforeId?: string;
}

/** Retry delays: `baseSeconds * 2^(attempt-1)` capped at `maxSeconds`, jittered into [d/2, d]. */
export interface BackoffOptions {
  baseSeconds: number;
  maxSeconds: number;
}

/** Options of {@link createJobQueue}. */
export interface JobQueueOptions {
  /** The queue's name; several queues share one table. */
  queue: string;
  /** Default lease of `claim` (seconds, default 30). */
  leaseSeconds?: number;
  /** Retry delays (default 2 s doubling up to 600 s). */
  backoff?: Partial<BackoffOptions>;
  /** Source of jitter in [0, 1) (default Math.random); tests pin it. */
  random?: () => number;
}

/** A named job queue on Postgres; see docs/jobs-and-tasks.md for its guarantees. */
export interface JobQueue<P = unknown, R = unknown> {
  readonly name: string;
  /** Default lease length of `claim`, in seconds. */
  readonly leaseSeconds: number;
  /** Adds a job (or, with a known `key`, returns the existing one). */
  enqueue(payload: P, options?: EnqueueOptions): Promise<EnqueueResult>;
  /** Takes the next ready job (or one whose lease expired) with a new lease; null when none. */
  claim(options: ClaimOptions): Promise<ClaimedJob<P, R> | null>;
  /** Extends the lease; false when the lease is no longer this claim's (the job was lost). */
  heartbeat(job: JobLease, leaseSeconds?: number): Promise<boolean>;
  /** Marks the job completed with `result`; true exactly once, for the current lease holder. */
  complete(job: JobLease, result?: R): Promise<boolean>;
  /** Records a failure: retried after a backoff, or dead; null when the lease was lost. */
  fail(job: JobLease, error: unknown, options?: FailOptions): Promise<FailResult | null>;
  /** Gives the job back unfinished (a worker shutting down); the attempt is not counted. */
  release(job: JobLease): Promise<boolean>;
  /**
   * Inside the caller's transaction, locks the job's row and answers whether this lease still
   * holds. When true, nobody can claim the job until `tx` ends, so the caller's writes in `tx`
   * land only while it owns the job: a stale worker's writes are refused, not just its outcome.
   * @example await sql.begin(async (tx) => { if (!(await queue.fence(job, tx))) throw new LeaseLostError("lost"); await tx`insert into scores ...`; });
   */
  fence(job: JobLease, tx: TransactionSql): Promise<boolean>;
  /** Cancels a pending or running job (a running one's worker loses its lease); false if finished. */
  cancel(id: string, reason?: string): Promise<boolean>;
  /** One job of this queue, or null. */
  get(id: string): Promise<Job<P, R> | null>;
  /** Jobs of this queue, newest first. */
  list(options?: ListJobsOptions): Promise<Job<P, R>[]>;
  /** How many jobs are in each status. */
  stats(): Promise<JobStats>;
}

interface JobRow {
  id: string;
  queue: string;
  idempotency_key: string | null;
  payload: unknown;
  status: JobStatus;
  priority: number;
  attempts: number;
  max_attempts: number;
  run_at: Date;
  lease_token: string;
  lease_owner: string | null;
  lease_expires_at: Date | null;
  last_error: string | null;
  result: unknown;
  created_at: Date;
  updated_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  trace_parent?: string | null;
}

const QUEUE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
// bigint identity values as postgres.js returns them: decimal strings.
const JOB_ID = /^[1-9][0-9]{0,18}$/;
const INT32 = 2 ** 31 - 1;
const MAX_DELAY_SECONDS = 10 * 365 * 24 * 3600;
const STATUSES: readonly JobStatus[] = ["pending", "running", "completed", "dead", "cancelled"];

function toJob<P, R>(row: JobRow): Job<P, R> {
  return {
    id: String(row.id),
    queue: row.queue,
    key: row.idempotency_key,
    payload: row.payload as P,
    status: row.status,
    priority: row.priority,
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    runAt: row.run_at,
    leaseToken: Number(row.lease_token),
    leaseOwner: row.lease_owner,
    leaseExpiresAt: row.lease_expires_at,
    lastError: row.last_error,
    result: row.result as R | null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    traceParent: row.trace_parent ?? null,
  };
}

/**
 * JSON text for a jsonb column, or a TypeError naming what cannot be stored. It is bound as
 * `${text}::text::jsonb`: postgres.js JSON-encodes a parameter it knows is jsonb, which would
 * store the text as one JSON string.
 */
function jsonText(value: unknown, what: string): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new TypeError(`${what} must be JSON-serialisable: ${(error as Error).message}`);
  }
  if (text === undefined)
    throw new TypeError(`${what} must be JSON-serialisable, got ${typeof value}`);
  // jsonb refuses the NUL character; say so here rather than as a driver error mid-request.
  if (text.includes("\\u0000"))
    throw new TypeError(`${what} contains a NUL character (\\u0000), which Postgres cannot store`);
  return text;
}

function positiveSeconds(value: number, what: string, max = MAX_DELAY_SECONDS): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || value > max) {
    throw new RangeError(
      `${what} must be a number of seconds in (0, ${max}], got ${String(value)}`,
    );
  }
  return value;
}

function integerIn(value: number, min: number, max: number, what: string): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${what} must be an integer in [${min}, ${max}], got ${String(value)}`);
  }
  return value;
}

/** A lease the database could hold: a well-formed id and a safe integer token. */
function validLease(job: JobLease): boolean {
  return typeof job.id === "string" && JOB_ID.test(job.id) && Number.isSafeInteger(job.leaseToken);
}

/**
 * A job queue stored in Postgres (table `sdk_jobs`, see `jobQueueMigrations`). Delivery is
 * at-least-once; completion is exactly-once, fenced by the lease token each claim increments.
 * Any number of workers in any number of processes may share a queue.
 * @example
 * const queue = createJobQueue<{ submissionId: string }>(db.sql, { queue: "evaluate" });
 * await queue.enqueue({ submissionId }, { key: `evaluate:${submissionId}` });
 */
export function createJobQueue<P = unknown, R = unknown>(
  sql: Sql,
  options: JobQueueOptions,
): JobQueue<P, R> {
  const name = options.queue;
  if (typeof name !== "string" || !QUEUE_NAME.test(name)) {
    throw new TypeError(
      `Queue name ${JSON.stringify(name)} must be 1-128 letters, digits, "_", ".", ":" or "-"`,
    );
  }
  const defaultLease = positiveSeconds(options.leaseSeconds ?? 30, "leaseSeconds", 86_400);
  const baseSeconds = positiveSeconds(options.backoff?.baseSeconds ?? 2, "backoff.baseSeconds");
  const maxSeconds = positiveSeconds(options.backoff?.maxSeconds ?? 600, "backoff.maxSeconds");
  const random = options.random ?? Math.random;

  async function enqueue(payload: P, opts: EnqueueOptions = {}): Promise<EnqueueResult> {
    const text = jsonText(payload, "Job payload");
    const key = opts.key ?? null;
    if (
      key !== null &&
      (typeof key !== "string" || key.length < 1 || key.length > 512 || key.includes("\u0000"))
    ) {
      throw new TypeError("Job key must be a string of 1-512 characters without NUL");
    }
    const maxAttempts = integerIn(opts.maxAttempts ?? 5, 1, 1000, "maxAttempts");
    const priority = integerIn(opts.priority ?? 0, -INT32, INT32, "priority");
    if (opts.runAt !== undefined && opts.delaySeconds !== undefined) {
      throw new TypeError("Pass either runAt or delaySeconds, not both");
    }
    if (
      opts.runAt !== undefined &&
      !(opts.runAt instanceof Date && Number.isFinite(opts.runAt.getTime()))
    ) {
      throw new TypeError("runAt must be a valid Date");
    }
    const delay = opts.delaySeconds === undefined ? 0 : opts.delaySeconds;
    if (!Number.isFinite(delay) || delay < 0 || delay > MAX_DELAY_SECONDS) {
      throw new RangeError(
        `delaySeconds must be in [0, ${MAX_DELAY_SECONDS}], got ${String(delay)}`,
      );
    }
    const q = opts.tx ?? sql;
    // With tracing on, the job carries the enqueuing span: its worker continues the trace.
    const traceParent = activeTraceparent();
    const inserted = await q<{ id: string }[]>`
      insert into sdk_jobs (queue, idempotency_key, payload, priority, max_attempts, run_at, trace_parent)
      values (
        ${name}, ${key}, ${text}::text::jsonb, ${priority}::int, ${maxAttempts}::int,
        coalesce(${opts.runAt ?? null}::timestamptz, now() + make_interval(secs => ${delay}::float8)),
        ${traceParent}::text
      )
      on conflict (queue, idempotency_key) do nothing
      returning id`;
    const row = inserted[0];
    if (row) return { id: String(row.id), created: true };
    // The key exists: a conflicting insert waited for its owner to commit, so this read sees it.
    const [existing] = await q<{ id: string }[]>`
      select id from sdk_jobs where queue = ${name} and idempotency_key = ${key}`;
    if (!existing) throw new Error(`Job with key ${JSON.stringify(key)} vanished while enqueueing`);
    return { id: String(existing.id), created: false };
  }

  async function claim(opts: ClaimOptions): Promise<ClaimedJob<P, R> | null> {
    const workerId = opts.workerId;
    if (typeof workerId !== "string" || workerId.length < 1 || workerId.length > 256) {
      throw new TypeError("claim: workerId must be a string of 1-256 characters");
    }
    const leaseSeconds = positiveSeconds(opts.leaseSeconds ?? defaultLease, "leaseSeconds", 86_400);
    // One statement: a worker lost at its last attempt goes dead (otherwise it would hold the
    // job forever), then the next job is locked, skipping any another claimer holds, and leased.
    const rows = await sql<JobRow[]>`
      with lost as (
        update sdk_jobs
        set status = 'dead', lease_expires_at = null, finished_at = now(), updated_at = now(),
            last_error = 'lease expired at attempt ' || attempts || ' of ' || max_attempts
              || ': the worker holding it was lost (killed, crashed or stuck)'
        where queue = ${name} and status = 'running' and lease_expires_at <= now()
          and attempts >= max_attempts
        returning id
      )
      update sdk_jobs
      set status = 'running',
          attempts = attempts + 1,
          lease_token = lease_token + 1,
          lease_owner = ${workerId},
          lease_expires_at = now() + make_interval(secs => ${leaseSeconds}::float8),
          last_error = case when status = 'running'
            then 'lease expired at attempt ' || attempts || ': the worker holding it was lost'
            else last_error end,
          started_at = now(),
          updated_at = now()
      where id = (
        select id from sdk_jobs
        where queue = ${name}
          and ((status = 'pending' and run_at <= now())
            or (status = 'running' and lease_expires_at <= now() and attempts < max_attempts))
        order by priority desc, run_at, id
        limit 1
        for update skip locked
      )
      returning *`;
    const row = rows[0];
    if (!row) return null;
    return { ...(toJob<P, R>(row) as ClaimedJob<P, R>), leaseSeconds };
  }

  async function heartbeat(job: JobLease, leaseSeconds?: number): Promise<boolean> {
    if (!validLease(job)) return false;
    const seconds = positiveSeconds(
      leaseSeconds ?? job.leaseSeconds ?? defaultLease,
      "leaseSeconds",
      86_400,
    );
    const rows = await sql`
      update sdk_jobs
      set lease_expires_at = now() + make_interval(secs => ${seconds}::float8), updated_at = now()
      where id = ${job.id}::bigint and queue = ${name} and status = 'running'
        and lease_token = ${job.leaseToken}::bigint
      returning id`;
    return rows.length === 1;
  }

  async function complete(job: JobLease, result?: R): Promise<boolean> {
    const text = result === undefined ? "null" : jsonText(result, "Job result");
    if (!validLease(job)) return false;
    const rows = await sql`
      update sdk_jobs
      set status = 'completed', result = ${text}::text::jsonb, lease_expires_at = null,
          finished_at = now(), updated_at = now()
      where id = ${job.id}::bigint and queue = ${name} and status = 'running'
        and lease_token = ${job.leaseToken}::bigint
      returning id`;
    return rows.length === 1;
  }

  async function fail(
    job: JobLease,
    error: unknown,
    opts: FailOptions = {},
  ): Promise<FailResult | null> {
    if (!validLease(job)) return null;
    const retryable = opts.retryable !== false;
    const minDelay = opts.delaySeconds === undefined ? 0 : opts.delaySeconds;
    if (!Number.isFinite(minDelay) || minDelay < 0 || minDelay > MAX_DELAY_SECONDS) {
      throw new RangeError(
        `delaySeconds must be in [0, ${MAX_DELAY_SECONDS}], got ${String(minDelay)}`,
      );
    }
    const jitter = Math.min(Math.max(random(), 0), 1);
    // attempts is the stored count, so the backoff cannot be skewed by a stale job object.
    const rows = await sql<{ status: "pending" | "dead"; run_at: Date; attempts: number }[]>`
      update sdk_jobs
      set status = case when attempts >= max_attempts or not ${retryable}::boolean
            then 'dead' else 'pending' end,
          run_at = case when attempts >= max_attempts or not ${retryable}::boolean
            then run_at
            else now() + make_interval(secs => greatest(${minDelay}::float8,
              least(${maxSeconds}::float8, ${baseSeconds}::float8 * power(2::float8, least(attempts - 1, 52)))
              * (0.5 + 0.5 * ${jitter}::float8))) end,
          finished_at = case when attempts >= max_attempts or not ${retryable}::boolean
            then now() else null end,
          last_error = ${errorText(error)},
          lease_expires_at = null,
          updated_at = now()
      where id = ${job.id}::bigint and queue = ${name} and status = 'running'
        and lease_token = ${job.leaseToken}::bigint
      returning status, run_at, attempts`;
    const row = rows[0];
    if (!row) return null;
    return row.status === "dead"
      ? { status: "dead", attempts: row.attempts }
      : { status: "pending", runAt: row.run_at, attempts: row.attempts };
  }

  async function release(job: JobLease): Promise<boolean> {
    if (!validLease(job)) return false;
    // The token is left as is: the next claim increments it, which is all fencing needs.
    const rows = await sql`
      update sdk_jobs
      set status = 'pending', attempts = greatest(attempts - 1, 0), lease_expires_at = null,
          updated_at = now()
      where id = ${job.id}::bigint and queue = ${name} and status = 'running'
        and lease_token = ${job.leaseToken}::bigint
      returning id`;
    return rows.length === 1;
  }

  async function fence(job: JobLease, tx: TransactionSql): Promise<boolean> {
    if (!validLease(job)) return false;
    // FOR UPDATE, not SKIP LOCKED: wait for a heartbeat in flight rather than answer "lost".
    const rows = await tx`
      select id from sdk_jobs
      where id = ${job.id}::bigint and queue = ${name} and status = 'running'
        and lease_token = ${job.leaseToken}::bigint
      for update`;
    return rows.length === 1;
  }

  async function cancel(id: string, reason = "cancelled"): Promise<boolean> {
    if (typeof id !== "string" || !JOB_ID.test(id)) return false;
    const rows = await sql`
      update sdk_jobs
      set status = 'cancelled', last_error = ${errorText(`cancelled: ${reason}`)},
          lease_expires_at = null, finished_at = now(), updated_at = now()
      where id = ${id}::bigint and queue = ${name} and status in ('pending', 'running')
      returning id`;
    return rows.length === 1;
  }

  async function get(id: string): Promise<Job<P, R> | null> {
    if (typeof id !== "string" || !JOB_ID.test(id)) return null;
    const [row] = await sql<JobRow[]>`
      select * from sdk_jobs where id = ${id}::bigint and queue = ${name}`;
    return row ? toJob<P, R>(row) : null;
  }

  async function list(opts: ListJobsOptions = {}): Promise<Job<P, R>[]> {
    const limit = integerIn(opts.limit ?? 50, 1, 1000, "limit");
    if (opts.status !== undefined && !STATUSES.includes(opts.status)) {
      throw new TypeError(`status must be one of ${STATUSES.join(", ")}`);
    }
    if (opts.beforeId !== undefined && !JOB_ID.test(opts.beforeId)) {
      throw new TypeError("beforeId must be a job id");
    }
    const rows = await sql<JobRow[]>`
      select * from sdk_jobs
      where queue = ${name}
        ${opts.status ? sql`and status = ${opts.status}` : sql``}
        ${opts.beforeId ? sql`and id < ${opts.beforeId}::bigint` : sql``}
      order by id desc
      limit ${limit}`;
    return rows.map((row) => toJob<P, R>(row));
  }

  async function stats(): Promise<JobStats> {
    const rows = await sql<{ status: JobStatus; n: number }[]>`
      select status, count(*)::int as n from sdk_jobs where queue = ${name} group by status`;
    const counts: JobStats = { pending: 0, running: 0, completed: 0, dead: 0, cancelled: 0 };
    for (const row of rows) counts[row.status] = row.n;
    return counts;
  }

  return {
    name,
    leaseSeconds: defaultLease,
    enqueue,
    claim,
    heartbeat,
    complete,
    fail,
    release,
    fence,
    cancel,
    get,
    list,
    stats,
  };
}
