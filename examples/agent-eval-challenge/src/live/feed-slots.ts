/**
 * The live feeds an instance serves at once, shared out: a feed holds its slot for up to 30
 * minutes, so with one pool and no shares a single anonymous client could open every slot and
 * keep everyone else out (429) for that long. Each client (its address: the SDK's clientKey) and
 * each submission gets a share of the pool; the pool's size still bounds the whole.
 *
 * In memory, per instance: a feed is a connection to this process, and it frees its slot when it
 * ends, however it ends (the route releases in a `finally`).
 */

/** How many feeds at once: in all, from one client, of one submission. */
export interface FeedShares {
  total: number;
  perClient: number;
  perSubmission: number;
}

/**
 * 256 in all; 8 from one client (a person watching a few submissions, or a few people behind one
 * NAT); 32 of one submission (so at least 8 submissions can be watched whoever crowds one).
 */
export const DEFAULT_FEED_SHARES: FeedShares = { total: 256, perClient: 8, perSubmission: 32 };

/** Which share is used up (each answers 429 with its own code). */
export type FeedRefusal = "total" | "client" | "submission";

/** A held slot: release it exactly once when the feed ends. */
export interface FeedSlot {
  release(): void;
}

/** The slots of one instance. */
export class FeedSlots {
  private open = 0;
  private readonly byClient = new Map<string, number>();
  private readonly bySubmission = new Map<number, number>();

  constructor(readonly shares: FeedShares) {}

  /** A slot for `client` watching `submissionId`, or the share that is used up. */
  take(client: string, submissionId: number): FeedSlot | { refused: FeedRefusal } {
    if (this.open >= this.shares.total) return { refused: "total" };
    if ((this.byClient.get(client) ?? 0) >= this.shares.perClient) return { refused: "client" };
    if ((this.bySubmission.get(submissionId) ?? 0) >= this.shares.perSubmission) {
      return { refused: "submission" };
    }
    this.open++;
    bump(this.byClient, client, 1);
    bump(this.bySubmission, submissionId, 1);
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        this.open--;
        bump(this.byClient, client, -1);
        bump(this.bySubmission, submissionId, -1);
      },
    };
  }

  /** Feeds open now: in all, and of one client (for tests and metrics). */
  count(client?: string): number {
    return client === undefined ? this.open : (this.byClient.get(client) ?? 0);
  }
}

/** Add `by` to `key`'s count, forgetting a key that reaches 0 (the maps stay as small as the feeds). */
function bump<K>(counts: Map<K, number>, key: K, by: number): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}
