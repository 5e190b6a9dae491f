import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** A token and what may be stored about it: the sha256 hash and a display hint, never the value. */
export interface IssuedToken {
  /** The clear value: show it once, then forget it. */
  token: string;
  hash: string;
  hint: string;
}

/**
 * A new random bearer token: `prefix` + 43 base64url characters (256 bits). The prefix says
 * what the token is for when one turns up in a config file or a leak scanner.
 */
export function generateToken(prefix = "pt_"): string {
  return `${prefix}${randomBytes(32).toString("base64url")}`;
}

/** sha256 hex of a token: what is stored at rest. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** The display hint of a token: first 4 and last 4 characters, nothing in between. */
export function tokenHint(token: string): string {
  if (token.length < 12) return "…";
  return `${token.slice(0, 4)}…${token.slice(-4)}`;
}

/** Generate a token together with its stored hash and hint. */
export function issueToken(prefix?: string): IssuedToken {
  const token = generateToken(prefix);
  return { token, hash: hashToken(token), hint: tokenHint(token) };
}

/**
 * Compare two secrets in constant time. Both sides are hashed first, so neither the content
 * nor the length of the expected value leaks through timing.
 */
export function secretsEqual(presented: string, expected: string): boolean {
  const a = createHash("sha256").update(presented, "utf8").digest();
  const b = createHash("sha256").update(expected, "utf8").digest();
  return timingSafeEqual(a, b) && presented.length === expected.length;
}

/** Check a presented token against a stored sha256 hex hash, in constant time. */
export function tokenMatchesHash(presented: string, storedHash: string): boolean {
  const a = createHash("sha256").update(presented, "utf8").digest();
  const b = Buffer.from(storedHash, "hex");
  return b.length === a.length && timingSafeEqual(a, b);
}

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(headers: Headers): string | null {
  const value = headers.get("authorization");
  if (!value) return null;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(value);
  return match ? match[1]! : null;
}
