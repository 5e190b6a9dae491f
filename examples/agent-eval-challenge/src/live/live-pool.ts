/**
 * GET /v1/execution-pool/live (rule 22): the eval units in flight, each with its latest task-log
 * event. A unit is one task of one run that is running (and not past its expiry), that has at
 * least one event, and whose latest task.status is not finished or failed. Keyed by submission
 * id; an empty pool is `{}`. Public: payloads lose every score- or weight-shaped key, and
 * nothing else is shown than the ids, the event's kind and time and its (redacted) payload.
 */
import type { Sql } from "@platform/challenge-sdk";
import { publicPayload } from "./redaction.js";

/** Units listed at most (the oldest submissions first): a public read stays bounded. */
export const MAX_POOL_UNITS = 500;

export interface LiveEvent {
  kind: string;
  at: string;
  [field: string]: unknown;
}

export interface PoolUnit {
  run_id: string;
  task_id: string;
  latest_event: LiveEvent;
}

export type LivePool = Record<string, PoolUnit[]>;

interface UnitRow {
  submission_id: string;
  run_id: string;
  task_id: string;
  kind: string;
  payload: Record<string, unknown>;
  created_at: Date;
}

const DONE_STATUSES = ["finished", "failed"];

export async function livePool(sql: Sql): Promise<LivePool> {
  const rows = await sql<UnitRow[]>`
    with running as (
      select id from eval_runs where state = 'running' and expires_at > now()
    ),
    latest as (
      select distinct on (e.run_id, e.task_id)
        e.submission_id, e.run_id, e.task_id, e.kind, e.payload, e.created_at
      from eval_task_events e
      where e.run_id in (select id from running)
      order by e.run_id, e.task_id, e.id desc
    ),
    latest_status as (
      select distinct on (e.run_id, e.task_id) e.run_id, e.task_id, e.payload ->> 'status' as status
      from eval_task_events e
      where e.run_id in (select id from running) and e.kind = 'task.status'
      order by e.run_id, e.task_id, e.id desc
    )
    select l.submission_id, l.run_id, l.task_id, l.kind, l.payload, l.created_at
    from latest l
    left join latest_status s on s.run_id = l.run_id and s.task_id = l.task_id
    where s.status is null or s.status not in ${sql(DONE_STATUSES)}
    order by l.submission_id, l.run_id, l.task_id
    limit ${MAX_POOL_UNITS}`;
  const pool: LivePool = {};
  for (const row of rows) {
    const key = String(row.submission_id);
    const units = pool[key] ?? [];
    units.push({ run_id: row.run_id, task_id: row.task_id, latest_event: liveEvent(row) });
    pool[key] = units;
  }
  return pool;
}

/**
 * One stored event as the public views show it: its kind and time, then its payload without
 * score-shaped keys. Log lines were redacted (env values included) before they were written;
 * the short messages of other kinds go through the shape redaction again here.
 */
export function liveEvent(row: {
  kind: string;
  payload: Record<string, unknown>;
  created_at: Date;
}): LiveEvent {
  const payload = publicPayload(row.payload, { redact: row.kind !== "task.log" }) as Record<
    string,
    unknown
  >;
  // kind and at come last: a payload field of the same name never hides them.
  return { ...payload, kind: row.kind, at: new Date(row.created_at).toISOString() };
}
