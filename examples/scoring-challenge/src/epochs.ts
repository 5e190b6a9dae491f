/**
 * Time-based epochs: epoch_id = floor(unix seconds / EPOCH_SECONDS). Every replica derives the
 * same epoch from the clock alone, with nothing stored; a submission records the epoch it was
 * accepted in and competes on that epoch's leaderboard.
 */

/** Six hours. */
export const DEFAULT_EPOCH_SECONDS = 21_600;
/** Most epochs one listing returns. */
export const MAX_EPOCHS_LISTED = 50;

/** GET /v1/epochs/current. */
export interface CurrentEpoch {
  epoch_id: number;
  epoch_seconds: number;
}

/** One entry of GET /v1/epochs. */
export interface EpochEntry {
  id: number;
  starts_at: string;
  ends_at: string;
  status: "current" | "closed";
}

/** The epoch `at` falls in. */
export function epochIdAt(at: Date, epochSeconds: number = DEFAULT_EPOCH_SECONDS): number {
  checkLength(epochSeconds);
  return Math.floor(Math.floor(at.getTime() / 1000) / epochSeconds);
}

/** The current epoch and its length. */
export function currentEpoch(
  now: Date = new Date(),
  epochSeconds: number = DEFAULT_EPOCH_SECONDS,
): CurrentEpoch {
  return { epoch_id: epochIdAt(now, epochSeconds), epoch_seconds: epochSeconds };
}

/** When epoch `id` starts and ends (the end is the next one's start). */
export function epochBounds(
  id: number,
  epochSeconds: number = DEFAULT_EPOCH_SECONDS,
): { startsAt: Date; endsAt: Date } {
  checkLength(epochSeconds);
  return {
    startsAt: new Date(id * epochSeconds * 1000),
    endsAt: new Date((id + 1) * epochSeconds * 1000),
  };
}

/**
 * The `limit` most recent epochs, newest (the current one) first; fewer near the Unix epoch.
 * `limit` is clamped to 1..MAX_EPOCHS_LISTED.
 */
export function recentEpochs(
  now: Date = new Date(),
  epochSeconds: number = DEFAULT_EPOCH_SECONDS,
  limit: number = MAX_EPOCHS_LISTED,
): EpochEntry[] {
  const current = epochIdAt(now, epochSeconds);
  const count = Math.min(Math.max(1, Math.floor(limit)), MAX_EPOCHS_LISTED, current + 1);
  return Array.from({ length: count }, (_, index) => {
    const id = current - index;
    const { startsAt, endsAt } = epochBounds(id, epochSeconds);
    return {
      id,
      starts_at: startsAt.toISOString(),
      ends_at: endsAt.toISOString(),
      status: index === 0 ? "current" : "closed",
    };
  });
}

function checkLength(epochSeconds: number): void {
  if (!Number.isSafeInteger(epochSeconds) || epochSeconds < 1) {
    throw new RangeError(
      `EPOCH_SECONDS must be a whole number of seconds >= 1, got ${epochSeconds}`,
    );
  }
}
