/**
 * Opaque paging cursors. The client gets back exactly what it was given, so a cursor is
 * `base64url(canonical JSON {v: 1, scope, after}) "." base64url(HMAC-SHA256)`: it cannot be
 * edited (to page into another miner's history) nor replayed on another list, because the
 * scope (route and owner, e.g. `eval-status:submission:42`) is inside the MAC and compared.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { canonicalJson, type JsonValue } from "./canonical-json.js";

/** The spec's bound on the eval status cursor, and the default for every list. */
export const CURSOR_MAX_LENGTH = 512;

/** The one error code of a refused cursor (the route answers it as a 4xx, never a 500). */
export type CursorErrorCode = "invalid_cursor";

/** A cursor that is too long, malformed, forged, or from another list. */
export class CursorError extends Error {
  override readonly name = "CursorError";
  readonly code: CursorErrorCode = "invalid_cursor";
}

const MAC_CHARACTERS = 43;
const CURSOR_PATTERN = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/;
// The MAC input starts with a tag, so these MACs can never collide with another HMAC use
// that someone might one day key with the same derived key.
const MAC_TAG = "agent-eval/cursor/v1\0";

/**
 * A cursor that resumes the list `scope` after `after` (typically the last row's sort key).
 * @throws RangeError when the cursor would exceed `maxLength` (a bug: it would be refused back).
 */
export function encodeCursor(
  key: Uint8Array,
  scope: string,
  after: JsonValue,
  maxLength: number = CURSOR_MAX_LENGTH,
): string {
  const payload = Buffer.from(canonicalJson({ v: 1, scope, after }), "utf8").toString("base64url");
  const cursor = `${payload}.${macOf(key, payload).toString("base64url")}`;
  if (cursor.length > maxLength) {
    throw new RangeError(
      `the cursor would be ${cursor.length} characters, over the ${maxLength} limit`,
    );
  }
  return cursor;
}

/**
 * The `after` value of a cursor issued by {@link encodeCursor} for this `scope`.
 * The length is checked before anything else, then the MAC before any parsing.
 * @throws CursorError (code `invalid_cursor`) for anything else.
 */
export function decodeCursor(
  key: Uint8Array,
  scope: string,
  cursor: string,
  maxLength: number = CURSOR_MAX_LENGTH,
): JsonValue {
  if (typeof cursor !== "string" || cursor.length > maxLength) {
    throw new CursorError(`the cursor is longer than ${maxLength} characters`);
  }
  const match = CURSOR_PATTERN.exec(cursor);
  if (match === null) throw new CursorError("the cursor is malformed");
  const [, payload, encodedMac] = match as unknown as [string, string, string];
  const mac = Buffer.from(encodedMac, "base64url");
  if (mac.toString("base64url") !== encodedMac || encodedMac.length !== MAC_CHARACTERS) {
    throw new CursorError("the cursor is malformed");
  }
  if (!timingSafeEqual(mac, macOf(key, payload))) {
    throw new CursorError("the cursor was not issued by this service");
  }
  // Issued by this service, so well-formed, but the version and scope are still checked.
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    throw new CursorError("the cursor is malformed");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new CursorError("the cursor is malformed");
  }
  const fields = body as { v?: unknown; scope?: unknown; after?: unknown };
  if (fields.v !== 1) throw new CursorError("the cursor has an unknown version");
  if (fields.scope !== scope) throw new CursorError("the cursor belongs to another list");
  if (!("after" in fields)) throw new CursorError("the cursor is malformed");
  return fields.after as JsonValue;
}

function macOf(key: Uint8Array, payload: string): Buffer {
  if (key.length < 32) throw new RangeError("a cursor key must be at least 32 bytes");
  return createHmac("sha256", key).update(`${MAC_TAG}${payload}`, "utf8").digest();
}
