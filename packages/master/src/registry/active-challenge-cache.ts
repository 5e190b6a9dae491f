import type { ChallengeRow } from "./challenge-row.js";

/**
 * A short-lived memory of which challenges are active, for the proxy's hot path: without it
 * every proxied request costs a database round trip (serialised on the embedded database).
 * Entries live `ttlMs` (a status change made on another replica is seen within that time) and
 * this replica's own writes invalidate at once. Misses are remembered too, so requests for
 * random slugs cannot hammer the database; the map is bounded.
 */
export class ActiveChallengeCache {
  private readonly entries = new Map<string, { row: ChallengeRow | null; expires: number }>();

  constructor(
    private readonly ttlMs = 1000,
    private readonly maxEntries = 4096,
  ) {}

  /** The cached answer for `slug`, or undefined when unknown or expired. */
  get(slug: string, now = Date.now()): ChallengeRow | null | undefined {
    const entry = this.entries.get(slug);
    if (!entry) return undefined;
    if (entry.expires <= now) {
      this.entries.delete(slug);
      return undefined;
    }
    return entry.row;
  }

  /** Remember `row` (null: not active) for `slug`. */
  set(slug: string, row: ChallengeRow | null, now = Date.now()): void {
    if (this.ttlMs <= 0) return;
    if (this.entries.size >= this.maxEntries) {
      // Oldest insertion first: Maps iterate in insertion order.
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(slug, { row, expires: now + this.ttlMs });
  }

  /** Forget `slug` (after a write to it). */
  invalidate(slug: string): void {
    this.entries.delete(slug);
  }
}
