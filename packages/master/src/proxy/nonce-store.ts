import { groupCommit, type Logger, type NoncePair, type Sql, spendNonces } from "@platform/core";

/** Options of {@link NonceStore}. */
export interface NonceStoreOptions {
  log: Logger;
  /** How long a reserved nonce is remembered (default 24 h; it must outlive the signature window). */
  retentionMs?: number;
  /** How often old rows are deleted, on the schedule and opportunistically (default 10 min). */
  pruneEveryMs?: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Single use of (hotkey, nonce) for signed uploads, in the master's database
 * (`submission_nonces`). A reservation is an `insert ... on conflict do nothing`, atomic on
 * one replica or many; concurrent uploads' reservations share one statement (core's
 * `groupCommit`), as a commit costs the embedded database far more than a row. Old rows are
 * pruned on a schedule and, between runs, after reservations.
 */
export class NonceStore {
  private readonly retentionMs: number;
  private readonly pruneEveryMs: number;
  private lastPrune = Date.now();
  private pruning: Promise<number> | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private stopped = false;
  private readonly spend: (pair: NoncePair) => Promise<boolean>;

  constructor(
    private readonly sql: Sql,
    private readonly options: NonceStoreOptions,
  ) {
    this.retentionMs = options.retentionMs ?? DAY_MS;
    this.pruneEveryMs = options.pruneEveryMs ?? 10 * 60 * 1000;
    this.spend = groupCommit((pairs) => spendNonces(sql, "submission_nonces", pairs));
  }

  /** Reserve (hotkey, nonce): true if this call took it, false if it was already used. */
  async reserve(hotkey: string, nonce: string): Promise<boolean> {
    const reserved = await this.spend({ hotkey, nonce });
    if (Date.now() - this.lastPrune >= this.pruneEveryMs) void this.prune();
    return reserved;
  }

  /** Delete reservations older than the retention; returns how many. One run at a time. */
  prune(): Promise<number> {
    if (this.stopped) return Promise.resolve(0);
    this.lastPrune = Date.now();
    this.pruning ??= (async () => {
      try {
        const seconds = this.retentionMs / 1000;
        const deleted = await this.sql`
          delete from submission_nonces where created_at < now() - make_interval(secs => ${seconds})`;
        if (deleted.count > 0)
          this.options.log.debug("pruned submission nonces", { count: deleted.count });
        return deleted.count;
      } catch (error) {
        this.options.log.warn("pruning submission nonces failed", { error });
        return 0;
      } finally {
        this.pruning = undefined;
      }
    })();
    return this.pruning;
  }

  /** Prune now and then every `pruneEveryMs` until {@link stop}. */
  start(): void {
    if (this.timer || this.stopped) return;
    void this.prune();
    this.timer = setInterval(() => void this.prune(), this.pruneEveryMs);
    this.timer.unref();
  }

  /** Stop the schedule and wait for a running prune (call before the database closes). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.pruning;
  }
}
