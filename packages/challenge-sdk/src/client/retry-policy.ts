/**
 * When a request that got no useful answer is worth sending again, and after how long. One
 * policy for every worker and tool, so a 503 with Retry-After means the same wait everywhere.
 */

/**
 * Statuses that say "not now" rather than "no": a timeout (408), too early (425), too many
 * requests (429) and every 5xx. Any other 4xx will answer the same again, so it is definitive.
 */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || (status >= 500 && status <= 599);
}

/**
 * The wait a Retry-After header asks for, in ms: delta seconds (`120`) or an HTTP date
 * (`Wed, 21 Oct 2026 07:28:00 GMT`, 0 once it has passed). Null when absent or unreadable, so
 * the caller falls back to its own backoff.
 * @example retryAfterMs(response.headers.get("retry-after")) // "30" -> 30_000
 */
export function retryAfterMs(value: string | null, now: number = Date.now()): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d{1,9}$/.test(text)) return Number(text) * 1000;
  // Only the HTTP-date form (always GMT): Date.parse alone would read "1.5" as a date in 2001.
  if (!/ GMT$/.test(text)) return null;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** How a client backs off when the server names no wait. */
export interface BackoffOptions {
  /** The first wait (default 1 s); each retry doubles it. */
  initialDelayMs?: number;
  /** The longest wait (default 30 s). */
  maxDelayMs?: number;
}

/**
 * The wait before retry number `retry` (1 for the first): exponential, capped, with jitter
 * (somewhere in the upper half), so many workers refused at once do not come back at once.
 */
export function backoffDelayMs(
  retry: number,
  options: BackoffOptions = {},
  random: () => number = Math.random,
): number {
  const initial = options.initialDelayMs ?? 1_000;
  const max = options.maxDelayMs ?? 30_000;
  const base = Math.min(max, initial * 2 ** Math.max(0, retry - 1));
  return Math.round(base / 2 + (random() * base) / 2);
}
