import type { Queryable } from "./nonce-store.js";

/** A per-hotkey limit: at most `limit` requests in any `windowSeconds` (a sliding window). */
export interface RateLimitRule {
  limit: number;
  windowSeconds: number;
  /**
   * Routes with the same bucket share one count (e.g. a direct and a bridge upload route).
   * Defaults to the route's `METHOD path`.
   */
  bucket?: string;
}

/**
 * Outcome of {@link takeRateLimit}: a slot (give it back with `releaseRateLimit`), or when the
 * oldest counted hit leaves the window (as a time, and as whole seconds from now, at least 1).
 */
export type RateLimitResult =
  | { ok: true; slot: string }
  | { ok: false; retryAfterSeconds: number; nextAllowedAt: Date };

/** What {@link takeRateLimit} counts: one key (a hotkey) in one bucket. */
export interface RateLimitTake {
  bucket: string;
  key: string;
  limit: number;
  windowSeconds: number;
}

/** Throws a RangeError unless `rule` is a usable limit (done when a route is registered). */
export function checkRateLimitRule(rule: RateLimitRule): void {
  if (!Number.isSafeInteger(rule.limit) || rule.limit < 1) {
    throw new RangeError("rateLimit.limit must be an integer >= 1");
  }
  if (!Number.isFinite(rule.windowSeconds) || rule.windowSeconds <= 0) {
    throw new RangeError("rateLimit.windowSeconds must be a finite number > 0");
  }
}

/**
 * Take one slot of a sliding-window limit, atomically: one upsert locks the (bucket, key) row,
 * drops hits older than the window and appends this one only while fewer than `limit` remain.
 * Times are the database's, so replicas with skewed clocks agree. Inside a transaction the row
 * stays locked until it ends, and a rollback takes the hit back (see `acceptWithinLimit`).
 * @example const r = await takeRateLimit(sql, { bucket: "uploads", key: hotkey, limit: 1, windowSeconds: 10_800 });
 */
export async function takeRateLimit(sql: Queryable, take: RateLimitTake): Promise<RateLimitResult> {
  checkRateLimitRule(take);
  const window = take.windowSeconds;
  const taken = await sql<{ slot: string }[]>`
    insert into sdk_rate_limits as r (bucket, hotkey, hits, window_seconds, updated_at)
    values (${take.bucket}, ${take.key}, array[now()], ${window}::double precision, now())
    on conflict (bucket, hotkey) do update
      set hits = array(
            select t from unnest(r.hits) as t
            where t > now() - make_interval(secs => ${window}::double precision) order by t
          ) || now(),
          window_seconds = excluded.window_seconds,
          updated_at = now()
      where (
        select count(*) from unnest(r.hits) as t
        where t > now() - make_interval(secs => ${window}::double precision)
      ) < ${take.limit}::int
    returning now()::text as slot`;
  if (taken[0]) return { ok: true, slot: taken[0].slot };
  const [wait] = await sql<{ seconds: number | null; next: Date | null; now: Date }[]>`
    select ceil(extract(epoch from (
             min(t) + make_interval(secs => ${window}::double precision) - now()
           )))::int as seconds,
           min(t) + make_interval(secs => ${window}::double precision) as next,
           now() as now
    from sdk_rate_limits as r, unnest(r.hits) as t
    where r.bucket = ${take.bucket} and r.hotkey = ${take.key}
      and t > now() - make_interval(secs => ${window}::double precision)`;
  const retryAfterSeconds = Math.max(1, wait?.seconds ?? 1);
  // No live hit left (only possible if the row changed between the two statements): say "now".
  const nextAllowedAt = wait?.next ?? wait?.now ?? new Date();
  return { ok: false, retryAfterSeconds, nextAllowedAt };
}

/** Give back a slot from {@link takeRateLimit} (the request it paid for failed). */
export async function releaseRateLimit(
  sql: Queryable,
  release: { bucket: string; key: string; slot: string },
): Promise<void> {
  // Removes exactly one occurrence: two requests of one instant hold equal slots. The slot is
  // cast from text: postgres.js would send a timestamptz parameter through a JS Date, dropping
  // the microseconds, and then it would never match.
  await sql`
    update sdk_rate_limits
    set hits = hits[:array_position(hits, ${release.slot}::text::timestamptz) - 1]
            || hits[array_position(hits, ${release.slot}::text::timestamptz) + 1:]
    where bucket = ${release.bucket} and hotkey = ${release.key}
      and array_position(hits, ${release.slot}::text::timestamptz) is not null`;
}

/** Delete rate-limit rows whose every hit is older than their window; returns how many. */
export async function pruneRateLimits(sql: Queryable): Promise<number> {
  const rows = await sql`
    delete from sdk_rate_limits
    where updated_at < now() - make_interval(secs => window_seconds)
    returning 1`;
  return rows.length;
}
