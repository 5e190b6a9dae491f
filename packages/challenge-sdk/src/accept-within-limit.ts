import { HttpError, type TransactionSql } from "@platform/core";
import { takeRateLimit } from "./rate-limit.js";

/** What {@link acceptWithinLimit} counts: at most `limit` acceptances of `key` in `bucket` per window. */
export interface AcceptanceLimit {
  /** Names the count (e.g. "submissions"); one of your own, so no route's `rateLimit` shares it. */
  bucket: string;
  /** Whose acceptances count: usually the miner's verified hotkey. */
  key: string;
  /** At most this many acceptances (an integer >= 1)... */
  limit: number;
  /** ...in any sliding window of this many seconds, by the database's clock. */
  windowSeconds: number;
  /** The 429's code; `rate_limited` (the request-level limit's code) unless given. */
  code?: string;
}

/**
 * Count one acceptance against `limit` inside `tx`, the transaction that accepts (stores) it, or
 * throw 429 (`Retry-After`, `retry_after_seconds` and `next_allowed_at` in the body). Because the
 * count is a row written by `tx`: a submission refused or failed later in `tx` rolls it back and
 * uses no slot, and two racing acceptances of one key queue on that row, the second seeing the
 * first's count once it commits, so they cannot both pass.
 * @example await sql.begin(async (tx) => { await acceptWithinLimit(tx, { bucket: "submissions", key: miner.hotkey, limit: 1, windowSeconds: 3 * 3600 }); await tx`insert ...`; });
 */
export async function acceptWithinLimit(tx: TransactionSql, limit: AcceptanceLimit): Promise<void> {
  const taken = await takeRateLimit(tx, limit);
  if (taken.ok) return;
  const next = taken.nextAllowedAt.toISOString();
  throw new HttpError(
    429,
    limit.code ?? "rate_limited",
    `at most ${limit.limit} accepted per ${limit.windowSeconds} s: the next is allowed at ${next}`,
    {
      headers: { "retry-after": String(taken.retryAfterSeconds) },
      extra: { retry_after_seconds: taken.retryAfterSeconds, next_allowed_at: next },
    },
  );
}
