/**
 * GET /v1/submissions/history: submissions accepted per UTC day over the last `days` days
 * (today included), oldest first, every day present (0 when nothing came), so a chart needs no
 * gap filling.
 */
import type { Sql } from "@platform/challenge-sdk";

/** Allowed windows. */
export const HISTORY_DAYS = { min: 1, max: 366, default: 90 } as const;

/** Daily counts over the last `days` UTC days. */
export async function submissionHistory(
  sql: Sql,
  days: number,
): Promise<{ date: string; count: number }[]> {
  const span = Math.min(Math.max(Math.floor(days), HISTORY_DAYS.min), HISTORY_DAYS.max) - 1;
  return sql<{ date: string; count: number }[]>`
    with today as (select (now() at time zone 'UTC')::date as day),
    window_days as (
      select (today.day - offset_days)::date as day
      from today, generate_series(0, ${span}::int) as offset_days
    ),
    counts as (
      select (created_at at time zone 'UTC')::date as day, count(*)::int as count
      from submissions, today
      where created_at >= (today.day - ${span}::int)::timestamp at time zone 'UTC'
      group by 1
    )
    select to_char(window_days.day, 'YYYY-MM-DD') as date, coalesce(counts.count, 0)::int as count
    from window_days left join counts using (day)
    order by window_days.day`;
}
