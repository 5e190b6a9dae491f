/** Options of {@link groupCommit}. */
export interface GroupCommitOptions {
  /** Most items one flush takes (default 256); the rest wait for the next flush. */
  maxBatch?: number;
}

interface Pending<I, O> {
  item: I;
  resolve(value: O): void;
  reject(error: unknown): void;
}

/**
 * Group commit: concurrent single-row writes share one statement and one commit. The first call
 * on an idle writer flushes at once, alone (no timer, no added latency); calls made while a
 * flush runs queue and go together in the next one, so batches grow exactly as fast as the
 * database falls behind. On the embedded database a commit costs far more than a row (and every
 * statement runs on the caller's thread): signed uploads spend one nonce each, and this is what
 * lets them pass 1,000 per second (docs/performance.md, `signed-upload-pool`).
 *
 * `flush` gets the items in call order and returns one result per item, in the same order; if
 * it throws (or miscounts), every call of that batch rejects with the error, as each would have
 * alone. Flushes never overlap.
 * @example const reserve = groupCommit((pairs) => insertAll(sql, pairs)); await reserve(pair);
 */
export function groupCommit<I, O>(
  flush: (items: readonly I[]) => Promise<readonly O[]>,
  options: GroupCommitOptions = {},
): (item: I) => Promise<O> {
  const maxBatch = Math.max(1, options.maxBatch ?? 256);
  const queue: Pending<I, O>[] = [];
  let flushing = false;

  const drain = async () => {
    flushing = true;
    while (queue.length > 0) {
      const batch = queue.splice(0, maxBatch);
      try {
        const results = await flush(batch.map((entry) => entry.item));
        if (results.length !== batch.length) {
          throw new Error(`group commit: ${results.length} results for ${batch.length} items`);
        }
        batch.forEach((entry, i) => {
          entry.resolve(results[i] as O);
        });
      } catch (error) {
        for (const entry of batch) entry.reject(error);
      }
    }
    flushing = false;
  };

  return (item) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      if (!flushing) void drain();
    });
}
