import { isSlug } from "../schemas/slug.js";
import { sha256, toBytes, toHex } from "./_bytes.js";
import { isValidNonce } from "./nonce.js";

/** First line of every signed request message; a new format gets a new version, never an edit. */
export const REQUEST_MESSAGE_VERSION = "platform-request-v1";

/** What a signed request message is built from. */
export interface CanonicalRequestParts {
  /** HTTP method, any case; it is upper-cased. */
  method: string;
  /** Request target as sent on the wire: `/path?query` (origin-form, no fragment). */
  path: string;
  /** Challenge slug the request is addressed to (see `isSlug`); omitted or `undefined` signs `-`. */
  slug?: string | undefined;
  /** Unix time in whole seconds. */
  timestamp: number;
  /** Single-use nonce, see `isValidNonce`. */
  nonce: string;
  /** Exact body bytes (a string is UTF-8 encoded); omitted means an empty body. */
  body?: Uint8Array | string | undefined;
  /** Lowercase hex sha256 of the body, for callers that hashed a stream; wins over `body`. */
  bodySha256?: string | undefined;
}

const METHOD = /^[A-Za-z]{1,32}$/;
const PATH = /^\/[\x21-\x22\x24-\x7e]*$/; // printable ASCII without `#`
const SHA256_HEX = /^[0-9a-f]{64}$/;
const UNRESERVED = /[A-Za-z0-9\-._~]/;

/** Lowercase hex sha256 of the bytes (a string is UTF-8 encoded). */
export function sha256Hex(bytes: Uint8Array | string): string {
  return toHex(sha256(toBytes(bytes)));
}

/**
 * The exact text a client signs, lines joined by "\n", no trailing newline.
 * Throws a TypeError when a part cannot appear in a valid request.
 * @example canonicalRequestMessage({ method: "get", path: "/v1/x?b=2&a=1", timestamp: 1795262400, nonce: "0123456789abcdef" })
 */
export function canonicalRequestMessage(parts: CanonicalRequestParts): string {
  if (!METHOD.test(parts.method))
    throw new TypeError(`invalid method: ${JSON.stringify(parts.method)}`);
  if (!Number.isSafeInteger(parts.timestamp) || parts.timestamp < 0) {
    throw new TypeError(`timestamp must be a non-negative integer of seconds: ${parts.timestamp}`);
  }
  if (!isValidNonce(parts.nonce))
    throw new TypeError(`invalid nonce: ${JSON.stringify(parts.nonce)}`);
  if (parts.slug !== undefined && !isSlug(parts.slug)) {
    throw new TypeError(`invalid slug: ${JSON.stringify(parts.slug)}`);
  }
  let bodyHash: string;
  if (parts.bodySha256 !== undefined) {
    if (!SHA256_HEX.test(parts.bodySha256))
      throw new TypeError("bodySha256 must be 64 lowercase hex");
    bodyHash = parts.bodySha256;
  } else {
    bodyHash = sha256Hex(parts.body ?? "");
  }
  return [
    REQUEST_MESSAGE_VERSION,
    parts.method.toUpperCase(),
    canonicalTarget(parts.path),
    parts.slug ?? "-",
    String(parts.timestamp),
    parts.nonce,
    bodyHash,
  ].join("\n");
}

// The path is signed verbatim; only the query is canonicalised, because clients disagree on
// parameter order and on how they percent-encode values, but never on the path they send.
function canonicalTarget(target: string): string {
  const q = target.indexOf("?");
  const path = q === -1 ? target : target.slice(0, q);
  if (!PATH.test(path)) throw new TypeError(`invalid request path: ${JSON.stringify(path)}`);
  const query = q === -1 ? "" : canonicalQuery(target.slice(q + 1));
  return query === "" ? path : `${path}?${query}`;
}

/**
 * The first query key that appears more than once in `target` (compared as the canonical form
 * encodes it, so `a` and `%61` are one key), or null. Signed routes refuse such a request: the
 * canonical query sorts the values, so `?f=a&f=b` and `?f=b&f=a` sign alike, while a reader
 * taking "the first value" sees different ones.
 * @example repeatedQueryKey("/x?f=good.zip&f=evil.zip") // "f"
 */
export function repeatedQueryKey(target: string): string | null {
  const q = target.indexOf("?");
  if (q === -1) return null;
  const seen = new Set<string>();
  for (const piece of target
    .slice(q + 1)
    .split("#", 1)[0]!
    .split("&")) {
    if (piece === "") continue;
    const eq = piece.indexOf("=");
    const key = reencode(eq === -1 ? piece : piece.slice(0, eq));
    if (seen.has(key)) return key;
    seen.add(key);
  }
  return null;
}

function canonicalQuery(query: string): string {
  if (query.includes("#")) throw new TypeError("a request target has no fragment");
  const pairs: [string, string][] = [];
  for (const piece of query.split("&")) {
    if (piece === "") continue;
    const eq = piece.indexOf("=");
    const key = eq === -1 ? piece : piece.slice(0, eq);
    const value = eq === -1 ? "" : piece.slice(eq + 1);
    pairs.push([reencode(key), reencode(value)]);
  }
  pairs.sort(([ka, va], [kb, vb]) => compare(ka, kb) || compare(va, vb));
  return pairs.map(([k, v]) => `${k}=${v}`).join("&");
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// Form decoding (`+` is a space, valid %XX is a byte, anything else is its UTF-8 bytes), then
// RFC 3986 encoding of every byte outside the unreserved set, upper-case hex. Works on bytes
// so invalid UTF-8 survives unchanged; Python: quote(unquote_to_bytes(s.replace("+", " ")), safe="").
function reencode(component: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < component.length; i++) {
    const ch = component[i]!;
    if (ch === "+") {
      bytes.push(0x20);
    } else if (ch === "%" && /^[0-9A-Fa-f]{2}$/.test(component.slice(i + 1, i + 3))) {
      bytes.push(Number.parseInt(component.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      const cp = component.codePointAt(i)!;
      if (cp > 0xffff) i++;
      bytes.push(...Buffer.from(String.fromCodePoint(cp), "utf8"));
    }
  }
  let out = "";
  for (const b of bytes) {
    const ch = String.fromCharCode(b);
    out +=
      b < 0x80 && UNRESERVED.test(ch) ? ch : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}
