import { HttpError } from "@platform/core";

/** Where a passthrough request goes: its challenge, the normalised path below it, its query. */
export interface ProxyTarget {
  slug: string;
  /** The normalised path below the challenge root, percent-encoded for the wire ("/" at least). */
  path: string;
  /**
   * The segments of `path`, decoded, folded (NFKC, lower case) and without `;params` or trailing
   * dots and spaces: what the block rules judge.
   */
  segments: string[];
  /** The query exactly as the client sent it, with its "?" ("" when there is none). */
  query: string;
}

const SLUG = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;
// A request target never needs more than a few rounds; more is someone probing the decoder.
const MAX_DECODE_ROUNDS = 8;
// RFC 3986 pchar minus pct-encoded: the bytes a path segment may carry unencoded.
const SEGMENT_SAFE = /^[A-Za-z0-9\-._~!$&'()*+,;=:@]$/;
// C0, DEL and C1 controls: never part of a path a challenge should see.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const utf8 = new TextDecoder("utf-8", { fatal: true });

function invalidPath(message: string): HttpError {
  return new HttpError(400, "invalid_path", message);
}

/**
 * The bytes of a request target. node:http hands the target over as latin1 (one char per byte),
 * so raw UTF-8 survives as bytes; a string with wider chars came from a URL and is UTF-8.
 */
function targetBytes(text: string): Buffer {
  return /[^\u0000-\u00ff]/.test(text) ? Buffer.from(text, "utf8") : Buffer.from(text, "latin1");
}

function hexValue(byte: number | undefined): number {
  if (byte === undefined) return -1;
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  const lower = byte | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

/** One round of %XX decoding over bytes; a `%` not followed by two hex digits stays as it is. */
function decodeOnce(bytes: Buffer): Buffer {
  if (!bytes.includes(0x25)) return bytes;
  const out = Buffer.allocUnsafe(bytes.length);
  let length = 0;
  for (let i = 0; i < bytes.length; i++) {
    const high = bytes[i] === 0x25 ? hexValue(bytes[i + 1]) : -1;
    const low = high === -1 ? -1 : hexValue(bytes[i + 2]);
    if (low === -1) {
      out[length++] = bytes[i]!;
    } else {
      out[length++] = high * 16 + low;
      i += 2;
    }
  }
  return out.subarray(0, length);
}

/**
 * Percent-decode until nothing changes, so `%252e%252e` is judged as `..`: whatever number of
 * decodings a server behind us applies, it cannot reach a spelling we did not check.
 */
function decodeFully(raw: string): string {
  let bytes = targetBytes(raw);
  for (let round = 0; ; round++) {
    const next = decodeOnce(bytes);
    if (next.length === bytes.length) break;
    if (round === MAX_DECODE_ROUNDS)
      throw invalidPath("The path is percent-encoded too many times");
    bytes = next;
  }
  try {
    return utf8.decode(bytes);
  } catch {
    throw invalidPath("The path is not valid UTF-8 once decoded");
  }
}

function withoutParams(segment: string): string {
  const semicolon = segment.indexOf(";");
  return semicolon === -1 ? segment : segment.slice(0, semicolon);
}

/** `.` or `..`, also when spelled `..;x` (Tomcat) or in full-width (an NFKC-folding server). */
function dotSegment(segment: string): "." | ".." | null {
  const bare = withoutParams(segment).normalize("NFKC");
  return bare === "." || bare === ".." ? bare : null;
}

/** The form a segment is judged in: case, compatibility spellings, params and trailing dots gone. */
export function segmentKey(segment: string): string {
  return withoutParams(segment)
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[.\s]+$/u, "");
}

/** Percent-encode one decoded segment for the wire (UTF-8, upper-case hex). */
export function encodeSegment(segment: string): string {
  let out = "";
  for (const char of segment) {
    if (SEGMENT_SAFE.test(char)) {
      out += char;
      continue;
    }
    for (const byte of Buffer.from(char, "utf8"))
      out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/**
 * Split a request target into path and query, dropping a fragment (clients never send one; a
 * URL parser would drop it too).
 */
export function splitTarget(target: string): { path: string; query: string } {
  const hash = target.indexOf("#");
  const bare = hash === -1 ? target : target.slice(0, hash);
  const question = bare.indexOf("?");
  return question === -1
    ? { path: bare, query: "" }
    : { path: bare.slice(0, question), query: bare.slice(question) };
}

/**
 * Decode and resolve a path: percent-decoding until stable, `\` read as `/`, empty segments
 * dropped, `.` and `..` resolved without ever climbing above the first `root` segments, and
 * control characters refused (400 `invalid_path`). Returns the remaining segments, decoded.
 */
export function resolveSegments(
  rawPath: string,
  root = 0,
): { segments: string[]; trailingSlash: boolean } {
  if (CONTROL.test(rawPath)) throw invalidPath("The path contains control characters");
  const decoded = decodeFully(rawPath);
  if (CONTROL.test(decoded)) throw invalidPath("The path contains control characters");
  const pieces = decoded.replaceAll("\\", "/").split("/");
  const segments: string[] = [];
  let trailingSlash = false;
  for (const piece of pieces) {
    if (piece === "") {
      trailingSlash = true;
      continue;
    }
    const dot = dotSegment(piece);
    trailingSlash = dot !== null;
    if (dot === null) segments.push(piece);
    else if (dot === ".." && segments.length > root) segments.pop();
    // a `..` at the root is dropped: it never climbs above it
  }
  return { segments, trailingSlash };
}

/**
 * One plain path segment (a route parameter such as a submission id), fully decoded: null when
 * it is empty, holds a separator or a control character, or is a dot segment once decoded.
 */
export function plainSegment(raw: string): string | null {
  let decoded: string;
  try {
    decoded = decodeFully(raw);
  } catch {
    return null;
  }
  if (decoded === "" || CONTROL.test(decoded) || /[/\\]/.test(decoded) || dotSegment(decoded))
    return null;
  return decoded;
}

/**
 * Parse a passthrough request target (`/challenges/{slug}/{path}?{query}`, as the client sent
 * it) into the challenge and the normalised path below it. The prefix is read from the same
 * decoded spelling as the rest, and `..` never climbs out of the challenge root, so the path
 * that is judged is the path that is forwarded. Throws 400 `invalid_path` for a target that
 * cannot be judged and 404 `challenge_not_found` for a segment that cannot be a slug.
 */
export function parseProxyTarget(target: string): ProxyTarget {
  if (!target.startsWith("/")) throw invalidPath("The request target must be a path");
  const { path: rawPath, query } = splitTarget(target);
  const { segments, trailingSlash } = resolveSegments(rawPath, 2);
  const [prefix, slug, ...rest] = segments;
  if (prefix !== "challenges" || slug === undefined) {
    throw invalidPath("Address a challenge as /challenges/{slug}/{path}");
  }
  if (!SLUG.test(slug))
    throw new HttpError(404, "challenge_not_found", "No active challenge with that slug");
  const encoded = rest.map(encodeSegment).join("/");
  return {
    slug,
    path: `/${encoded}${trailingSlash && rest.length > 0 ? "/" : ""}`,
    segments: rest.map(segmentKey),
    query,
  };
}
