/**
 * Capability tokens: a bearer credential that names what it opens. `<id>.<mac>`, where the MAC
 * (HMAC-SHA256 under a purpose key) covers a domain and the id, so the review VM needs no other
 * secret than its token and the service needs no token table: it recomputes the MAC. Only the
 * token's sha256 is stored, so revoking is deleting the hash and a database leak yields no
 * usable token.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";

/** Domains of the service's tokens: a token of one kind never opens a route of the other. */
export const CapabilityDomain = {
  /** REVIEW_SESSION_TOKEN: one review assignment. */
  reviewAssignment: "agent-eval/review-assignment/v1",
  /** EVAL_RUN_TOKEN: one external eval run. */
  evalRun: "agent-eval/eval-run/v1",
  /** An attempt's events bearer: one task trial's log stream. */
  evalAttempt: "agent-eval/eval-attempt/v1",
} as const;

/** The ids a token may carry: what assignment and run ids are made of. */
export const CAPABILITY_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

const MAC_BYTES = 32;
// 32 bytes are 43 base64url characters without padding.
const MAC_CHARACTERS = 43;
const MAX_TOKEN_LENGTH = 64 + 1 + MAC_CHARACTERS;
const TOKEN_PATTERN = /^([A-Za-z0-9_-]{1,64})\.([A-Za-z0-9_-]{43})$/;

/** A freshly issued token: deliver `token` once, store only `sha256`. */
export interface IssuedCapabilityToken {
  token: string;
  /** sha256 of the token's UTF-8 bytes, lower-case hex. */
  sha256: string;
}

/** The two parts of a well-formed token (not yet checked). */
export interface ParsedCapabilityToken {
  id: string;
  mac: Buffer;
}

/**
 * The token of `id` in `domain`. Deterministic: issuing again gives the same token, so its
 * secrecy rests on the key, and its validity on the stored hash (deleted on revocation).
 * @throws RangeError for an id outside {@link CAPABILITY_ID_PATTERN} or a domain with a NUL.
 */
export function issueCapabilityToken(
  key: Uint8Array,
  domain: string,
  id: string,
): IssuedCapabilityToken {
  if (!CAPABILITY_ID_PATTERN.test(id)) {
    throw new RangeError("a capability id must match [A-Za-z0-9_-]{1,64}");
  }
  const token = `${id}.${macOf(key, domain, id).toString("base64url")}`;
  return { token, sha256: capabilityTokenSha256(token) };
}

/** The stored form of a token: sha256 of its UTF-8 bytes, lower-case hex. */
export function capabilityTokenSha256(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/**
 * The id and MAC of a well-formed token, or null: exact charset and lengths, one dot, and the
 * MAC in its one canonical base64url spelling (no padding, no spare bits set).
 */
export function parseCapabilityToken(token: string): ParsedCapabilityToken | null {
  // Length first: a hostile megabyte header costs nothing.
  if (typeof token !== "string" || token.length > MAX_TOKEN_LENGTH) return null;
  const match = TOKEN_PATTERN.exec(token);
  if (match === null) return null;
  const [, id, encodedMac] = match as unknown as [string, string, string];
  const mac = Buffer.from(encodedMac, "base64url");
  // The 43rd character carries 2 spare bits; a set one would be a second spelling of one MAC.
  if (mac.length !== MAC_BYTES || mac.toString("base64url") !== encodedMac) return null;
  return { id, mac };
}

/**
 * Whether `token` is the live token of its id in `domain`: its MAC verifies under `key` and its
 * sha256 equals `storedSha256` (the hash recorded when it was issued; gone once revoked). Both
 * comparisons are constant-time and both always run.
 */
export function checkCapabilityToken(
  key: Uint8Array,
  domain: string,
  token: string,
  storedSha256: string,
): boolean {
  const parsed = parseCapabilityToken(token);
  if (parsed === null || !/^[0-9a-f]{64}$/.test(storedSha256)) return false;
  const macValid = timingSafeEqual(parsed.mac, macOf(key, domain, parsed.id));
  const presentedHash = createHash("sha256").update(token, "utf8").digest();
  const hashValid = timingSafeEqual(presentedHash, Buffer.from(storedSha256, "hex"));
  return macValid && hashValid;
}

function macOf(key: Uint8Array, domain: string, id: string): Buffer {
  // The NUL separates domain from id without ambiguity: neither may contain one.
  if (domain.length === 0 || domain.includes("\0")) {
    throw new RangeError("a capability domain must be a non-empty string without NUL");
  }
  if (key.length < 32) throw new RangeError("a capability key must be at least 32 bytes");
  return createHmac("sha256", key).update(`${domain}\0${id}`, "utf8").digest();
}
