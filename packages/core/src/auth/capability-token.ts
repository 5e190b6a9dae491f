/**
 * Capability tokens: a bearer credential that names what it opens. `<id>.<mac>`, or
 * `<id>.<expires>.<mac>` with an expiry, where the MAC (HMAC-SHA256 under the caller's key)
 * covers the scope, the id and the expiry. Whoever holds the token needs no other secret, and
 * the issuer needs no token table to know what a token names: it recomputes the MAC. Only the
 * token's sha256 is stored (beside the record it opens), so a database leak yields no usable
 * token and revoking one is replacing or deleting its hash.
 *
 * The expiry is optional. A token that stands alone (a download link, a one-hour grant) carries
 * it, inside the MAC, and is refused past it. A token that opens a record with its own lifetime
 * (a run that expires, is cancelled, or waits past its deadline for a verdict) leaves it out:
 * the record's state is the finer verdict, and tells "revoked" (410) from "not yours" (401).
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { hashToken, type IssuedToken, tokenHint } from "./tokens.js";

/** The ids a capability token may carry: what record ids are made of (no dot, no NUL). */
export const CAPABILITY_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Keys shorter than this are refused: the MAC is only as strong as its key. */
export const MIN_CAPABILITY_KEY_BYTES = 32;

const MAC_BYTES = 32;
// 32 bytes are 43 base64url characters without padding.
const MAC_CHARACTERS = 43;
// Unix seconds, canonical decimal (no sign, no leading zero): one spelling per expiry.
const EXPIRES_PATTERN = /^[1-9][0-9]{0,11}$/;
const MAX_TOKEN_LENGTH = 64 + 1 + 12 + 1 + MAC_CHARACTERS;
const TOKEN_PATTERN = /^([A-Za-z0-9_-]{1,64})(?:\.([0-9]{1,12}))?\.([A-Za-z0-9_-]{43})$/;
// Compared against when no hash is stored, so a missing record costs the same comparisons.
const NO_STORED_HASH = Buffer.alloc(32);

/** What makes a token: the key it is MACed under, its scope, the id it names, its expiry. */
export interface CapabilityTokenSpec {
  /** At least 32 bytes; a key of its own per purpose (e.g. derived with HKDF from a master key). */
  key: Uint8Array;
  /** What kind of record the token opens, e.g. "my-challenge/run/v1": a token never opens another scope. */
  scope: string;
  /** The record's id ({@link CAPABILITY_ID_PATTERN}). */
  id: string;
  /** When the token stops opening anything (whole seconds; none: the record decides). */
  expiresAt?: Date | undefined;
}

/** A freshly issued capability token: hand out `token` once, store only `hash`. */
export interface IssuedCapabilityToken extends IssuedToken {
  id: string;
  /** The expiry inside the MAC (whole seconds), or null. */
  expiresAt: Date | null;
}

/** What a token claims, before anything about it is verified. */
export interface CapabilityClaim {
  id: string;
  expiresAt: Date | null;
}

/**
 * The verdict on a presented token. Refused as `invalid` (malformed, another scope, key or id, a
 * changed MAC or expiry), `revoked` (a genuine token whose hash is not the stored one, or none
 * is stored) or `expired` (genuine and current, past its expiry). Only a holder of a genuine
 * token can tell the last two apart; answer all three alike unless you mean to tell them.
 */
export type CapabilityVerdict =
  | ({ ok: true } & CapabilityClaim)
  | { ok: false; reason: "invalid" | "revoked" | "expired" };

/** What a presented token is checked against. */
export interface CapabilityCheck {
  key: Uint8Array;
  scope: string;
  /** sha256 hex recorded when the token was issued; null or undefined when there is none (revoked, unknown). */
  storedHash: string | null | undefined;
  /** The id the token must name (e.g. the path's); any id when left out. */
  id?: string | undefined;
  /** The clock expiry is judged against (default: now). */
  now?: Date | undefined;
}

/**
 * The token of `id` in `scope` under `key`, with its stored hash. Deterministic: issuing again
 * (same key, scope, id and expiry) gives the same token, so a response lost on the way can be
 * answered again; its secrecy rests on the key, its validity on the stored hash.
 * @throws RangeError for an id outside {@link CAPABILITY_ID_PATTERN}, an empty scope or one
 * with a NUL, a key under 32 bytes, or an expiry before 1970 or past year 33658.
 * @example
 * const { token, hash } = issueCapabilityToken({ key: runKey, scope: "my-challenge/run/v1", id: run.id });
 * await sql`update runs set token_sha256 = ${hash} where id = ${run.id}`; // hand `token` to the VM
 */
export function issueCapabilityToken(spec: CapabilityTokenSpec): IssuedCapabilityToken {
  if (!CAPABILITY_ID_PATTERN.test(spec.id)) {
    throw new RangeError("a capability id must match [A-Za-z0-9_-]{1,64}");
  }
  const expires = spec.expiresAt === undefined ? null : expiresText(spec.expiresAt);
  const mac = macOf(spec.key, spec.scope, spec.id, expires).toString("base64url");
  const token = expires === null ? `${spec.id}.${mac}` : `${spec.id}.${expires}.${mac}`;
  return {
    token,
    hash: hashToken(token),
    hint: tokenHint(token),
    id: spec.id,
    expiresAt: expires === null ? null : new Date(Number(expires) * 1000),
  };
}

/**
 * What a well-formed token claims (its id, its expiry), or null; NOTHING is verified: use it to
 * find the record whose stored hash {@link verifyCapabilityToken} needs, or to check a token's
 * shape where it is configured. Exact charset and lengths, the MAC in its one canonical spelling.
 */
export function readCapabilityToken(token: string): CapabilityClaim | null {
  const parsed = parse(token);
  return parsed === null ? null : { id: parsed.id, expiresAt: expiresDate(parsed.expires) };
}

/**
 * Whether `token` is a genuine, live token of `scope`: its MAC verifies under `key`, its sha256
 * is `storedHash`, it names `id` (when given) and has not expired. The MAC and hash comparisons
 * are constant-time and both always run, whether or not a hash is stored.
 * @example
 * const claim = readCapabilityToken(token);
 * if (claim?.id !== runId) return null;
 * const [run] = await sql`select * from runs where id = ${runId}`;
 * const verdict = verifyCapabilityToken(token, { key, scope, id: runId, storedHash: run?.token_sha256 });
 * return verdict.ok ? run : null;
 */
export function verifyCapabilityToken(token: string, check: CapabilityCheck): CapabilityVerdict {
  const parsed = parse(token);
  if (parsed === null) return { ok: false, reason: "invalid" };
  const stored =
    typeof check.storedHash === "string" && /^[0-9a-f]{64}$/.test(check.storedHash)
      ? Buffer.from(check.storedHash, "hex")
      : null;
  const macValid = timingSafeEqual(
    parsed.mac,
    macOf(check.key, check.scope, parsed.id, parsed.expires),
  );
  const hashValid = timingSafeEqual(Buffer.from(hashToken(token), "hex"), stored ?? NO_STORED_HASH);
  if (!macValid || (check.id !== undefined && parsed.id !== check.id)) {
    return { ok: false, reason: "invalid" };
  }
  if (stored === null || !hashValid) return { ok: false, reason: "revoked" };
  const expiresAt = expiresDate(parsed.expires);
  if (expiresAt !== null && expiresAt.getTime() <= (check.now ?? new Date()).getTime()) {
    return { ok: false, reason: "expired" };
  }
  return { ok: true, id: parsed.id, expiresAt };
}

interface ParsedToken {
  id: string;
  expires: string | null;
  mac: Buffer;
}

function parse(token: string): ParsedToken | null {
  // Length first: a hostile megabyte header costs nothing.
  if (typeof token !== "string" || token.length > MAX_TOKEN_LENGTH) return null;
  const match = TOKEN_PATTERN.exec(token);
  if (match === null) return null;
  const [, id, expires, encodedMac] = match as unknown as [
    string,
    string,
    string | undefined,
    string,
  ];
  if (expires !== undefined && !EXPIRES_PATTERN.test(expires)) return null;
  const mac = Buffer.from(encodedMac, "base64url");
  // The 43rd character carries 2 spare bits; a set one would be a second spelling of one MAC.
  if (mac.length !== MAC_BYTES || mac.toString("base64url") !== encodedMac) return null;
  return { id, expires: expires ?? null, mac };
}

function expiresText(at: Date): string {
  const seconds = Math.floor(at.getTime() / 1000);
  const text = String(seconds);
  if (!Number.isFinite(seconds) || !EXPIRES_PATTERN.test(text)) {
    throw new RangeError(
      "a capability expiry is a date after 1970 with at most 12 digits of seconds",
    );
  }
  return text;
}

function expiresDate(expires: string | null): Date | null {
  return expires === null ? null : new Date(Number(expires) * 1000);
}

function macOf(key: Uint8Array, scope: string, id: string, expires: string | null): Buffer {
  // NULs separate the parts without ambiguity: none may contain one, and a token with an expiry
  // has one part more, so it can never verify as a token without one (or the other way round).
  if (scope.length === 0 || scope.includes("\0")) {
    throw new RangeError("a capability scope must be a non-empty string without NUL");
  }
  if (key.length < MIN_CAPABILITY_KEY_BYTES) {
    throw new RangeError(`a capability key must be at least ${MIN_CAPABILITY_KEY_BYTES} bytes`);
  }
  const message = expires === null ? `${scope}\0${id}` : `${scope}\0${id}\0${expires}`;
  return createHmac("sha256", key).update(message, "utf8").digest();
}
