import { canonicalJson } from "../crypto/index.js";

/**
 * Whether a replayed write-once record is the one stored: equal as canonical JSON, so key order
 * (jsonb reorders keys) never turns an identical replay into a conflict.
 */
export function sameRecord(stored: unknown, replayed: unknown): boolean {
  return canonicalJson(stored) === canonicalJson(replayed);
}
