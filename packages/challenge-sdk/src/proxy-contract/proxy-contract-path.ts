import { HttpError } from "@platform/core";

/**
 * How the master's proxy reads a path before judging it, and which paths it never forwards:
 * one implementation, used by the master's proxy and by `defineChallenge` (which refuses a
 * public route the proxy would block). docs/proxy-contract.md is the prose.
 */

/**
 * First path segments the master's proxy refuses (403) together with everything below them: the
 * service endpoints a challenge serves its orchestrator and operator (health, liveness,
 * readiness, version, metrics), its internal routes, and benchmark executions.
 */
export const BLOCKED_PROXY_ROOTS: ReadonlySet<string> = new Set([
  "health",
  "livez",
  "readyz",
  "metrics",
  "version",
  "internal",
  "benchmark-executions",
  "benchmark_executions",
]);

// Actions that start work when they end a path under `benchmark` or `benchmarks`.
const BENCHMARK_ACTIONS: ReadonlySet<string> = new Set(["run", "execute", "launch"]);
const BENCHMARK_PARENTS: ReadonlySet<string> = new Set(["benchmark", "benchmarks"]);

// A request target never needs more than a few rounds; more is someone probing the decoder.
const MAX_DECODE_ROUNDS = 8;
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

/**
 * The form the proxy judges a decoded segment in: NFKC-folded, lower case, without `;params`
 * and trailing dots or spaces (the spellings servers behind it treat as the same name).
 * @example proxySegmentKey("Ｉｎｔｅｒｎａｌ.;x=1") // "internal"
 */
export function proxySegmentKey(segment: string): string {
  return withoutParams(segment)
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[.\s]+$/u, "");
}

/**
 * Splits a request target into path and query (the query verbatim, with its "?"), dropping a
 * fragment: clients never send one and a URL parser would drop it too.
 */
export function splitProxyTarget(target: string): { path: string; query: string } {
  const hash = target.indexOf("#");
  const bare = hash === -1 ? target : target.slice(0, hash);
  const question = bare.indexOf("?");
  return question === -1
    ? { path: bare, query: "" }
    : { path: bare.slice(0, question), query: bare.slice(question) };
}

/**
 * Decodes and resolves a raw path the way the proxy does: percent-decoding until stable, `\`
 * read as `/`, empty segments dropped, `.` and `..` resolved without ever climbing above the
 * first `root` segments. Throws `HttpError` 400 `invalid_path` for control characters, invalid
 * UTF-8 or too many layers of encoding. Returns the remaining segments, decoded (not folded).
 */
export function resolveProxyPath(
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
export function plainProxySegment(raw: string): string | null {
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
 * The block rule over judged segments (`proxySegmentKey` of each resolved segment): `/health`,
 * `/livez`, `/readyz`, `/metrics`, `/version`, `/internal`, `/benchmark-executions` and anything
 * below each, a
 * `benchmark-executions` segment anywhere, and a trailing run, execute or launch with a
 * `benchmark` or `benchmarks` segment above it (`/benchmarks/x/run`, `/v1/benchmark/launch`).
 */
export function isBlockedProxySegments(keys: readonly string[]): boolean {
  const [first] = keys;
  if (first === undefined) return false;
  if (BLOCKED_PROXY_ROOTS.has(first)) return true;
  if (keys.some((key) => key === "benchmark-executions" || key === "benchmark_executions"))
    return true;
  const last = keys[keys.length - 1]!;
  return BENCHMARK_ACTIONS.has(last) && keys.slice(0, -1).some((key) => BENCHMARK_PARENTS.has(key));
}

/**
 * True when the master's proxy would refuse a public request for `path` (below the challenge
 * root, e.g. `/v1/items/:id`), read exactly as the proxy reads it: decoded, dot segments
 * resolved, folded. A path the proxy cannot read at all (control characters, invalid UTF-8) is
 * refused too, so it counts as blocked. Route parameters (`:id`) never match a rule.
 * @example isBlockedProxyPath("/v1/..%2FInternal/x") // true
 */
export function isBlockedProxyPath(path: string): boolean {
  let segments: string[];
  try {
    segments = resolveProxyPath(splitProxyTarget(path).path).segments;
  } catch (error) {
    if (error instanceof HttpError) return true;
    throw error;
  }
  return isBlockedProxySegments(segments.map(proxySegmentKey));
}
