import { randomBytes } from "node:crypto";

/**
 * A fresh id this service mints (sessions, assignments, approvals, runs, attempts,
 * revalidations): 18 random bytes, 24 base64url characters (no guessing, no collision).
 */
export function mintId(): string {
  return randomBytes(18).toString("base64url");
}
