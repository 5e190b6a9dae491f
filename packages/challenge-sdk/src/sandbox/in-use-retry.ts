import { setTimeout as sleep } from "node:timers/promises";
import { isConflict } from "./docker-errors.js";

/** How often, and how far apart, a removal that Docker answers "in use" (409) is tried. */
export interface InUseRetryPolicy {
  attempts: number;
  /** The wait after attempt `n` (0-based) failed. */
  delayMs: (attempt: number) => number;
}

/**
 * The one policy for removing what Docker still holds a moment after its container went (a
 * files volume above all): 10 attempts, 100 ms more apart each time, 5.5 s at the most.
 * Removal usually succeeds on the second try; the tail covers a loaded engine, and giving up
 * leaves the object to the reaper, never to chance.
 */
export const IN_USE_RETRY: Readonly<InUseRetryPolicy> = Object.freeze({
  attempts: 10,
  delayMs: (attempt: number) => 100 * (attempt + 1),
});

/**
 * Runs `action` until it succeeds, retrying only while Docker answers 409 (in use), per
 * `policy`. Resolves true when it succeeded, false when it was still in use after the last
 * attempt; any other error is thrown at once.
 * @example await retryWhileInUse(() => docker.getVolume(name).remove());
 */
export async function retryWhileInUse(
  action: () => Promise<unknown>,
  policy: InUseRetryPolicy = IN_USE_RETRY,
): Promise<boolean> {
  for (let attempt = 0; attempt < policy.attempts; attempt++) {
    try {
      await action();
      return true;
    } catch (error) {
      if (!isConflict(error)) throw error;
      if (attempt + 1 < policy.attempts) await sleep(policy.delayMs(attempt));
    }
  }
  return false;
}
