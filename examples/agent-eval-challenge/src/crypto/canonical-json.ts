/**
 * RFC 8785 JSON Canonicalization Scheme (JCS): one byte sequence per JSON value, so a digest
 * or a MAC over a value means the same thing to every party (the review VM, the eval VM, this
 * service, an auditor in another language).
 *
 * - Object members sorted by the UTF-16 code units of their names (JavaScript's `<` on strings).
 * - Numbers in the ECMAScript shortest round-trip form (`String(n)`; -0 becomes "0"); NaN and
 *   the infinities have no JSON form and are refused.
 * - Strings escape only `"`, `\` and U+0000..U+001F (`\b \t \n \f \r`, else `\u00xx` lower-case
 *   hex); everything else is written as is (`/`, `<`, non-ASCII: no escape).
 * - No whitespace.
 * The input must be I-JSON (RFC 7493, required by RFC 8785 §3.1): strings with a lone surrogate
 * have no UTF-8 form and are refused rather than silently replaced.
 */
import { sha256Hex } from "./sha256-hex.js";

/** A value that has a JSON form. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };

/** Stable reasons a value cannot be canonicalised (branch on `code`). */
export type CanonicalJsonErrorCode =
  /** undefined, a function, a bigint, a symbol, or an object that is not a plain object/array. */
  | "unsupported_value"
  /** NaN, Infinity or -Infinity. */
  | "non_finite_number"
  /** An object or array that contains itself. */
  | "cyclic_value"
  /** A string or member name with an unpaired UTF-16 surrogate (not valid Unicode). */
  | "lone_surrogate"
  /** Nested deeper than {@link MAX_CANONICAL_DEPTH} (guards the stack on untrusted input). */
  | "too_deep"
  /** `parseCanonical` only: the bytes are not JSON, not UTF-8, or not in canonical form. */
  | "not_canonical_json";

/** Why a value could not be canonicalised; the message names the JSON path, never a value. */
export class CanonicalJsonError extends Error {
  override readonly name = "CanonicalJsonError";
  readonly code: CanonicalJsonErrorCode;

  constructor(code: CanonicalJsonErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? {} : { cause: options.cause });
    this.code = code;
  }
}

/**
 * Deeper documents are refused. Every document of this service is a few levels deep; the bound
 * keeps a hostile body (thousands of nested arrays) from overflowing the stack of the recursive
 * serialiser with a RangeError instead of a typed refusal.
 */
export const MAX_CANONICAL_DEPTH = 64;

// In unicode mode a well-formed surrogate pair is one code point, so this matches lone halves only.
const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * The RFC 8785 canonical form of `value`.
 * @throws CanonicalJsonError for a value that has no JSON form (see {@link CanonicalJsonErrorCode}).
 * @example canonicalJson({ b: [1e30, -0], a: "€" }) === '{"a":"€","b":[1e+30,0]}'
 */
export function canonicalJson(value: unknown): string {
  return serialize(value, "$", new Set(), 0);
}

/** sha256 (lower-case hex, no prefix) of the UTF-8 bytes of {@link canonicalJson}. */
export function canonicalDigest(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

// A fatal decoder refuses invalid UTF-8 (overlong forms, encoded surrogates) instead of
// replacing it with U+FFFD; ignoreBOM keeps a BOM in the text so JSON.parse refuses it.
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Parses a body that must be byte-exact canonical JSON (e.g. an eval result whose digest is
 * signed): the bytes are decoded and parsed, re-canonicalised and compared with the input, so
 * duplicate member names, whitespace, unsorted members, `1.0`, `\u0041` or `-0` are refused.
 * The caller bounds the body size before calling.
 * @throws CanonicalJsonError with code `not_canonical_json` (the reason in the message).
 */
export function parseCanonical(bytes: Uint8Array): JsonValue {
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch (error) {
    throw new CanonicalJsonError("not_canonical_json", "the body is not valid UTF-8", {
      cause: error,
    });
  }
  let parsed: JsonValue;
  try {
    parsed = JSON.parse(text) as JsonValue;
  } catch (error) {
    throw new CanonicalJsonError("not_canonical_json", "the body is not JSON", { cause: error });
  }
  let canonical: string;
  try {
    canonical = canonicalJson(parsed);
  } catch (error) {
    const reason = error instanceof Error ? error.message : "it has no canonical form";
    throw new CanonicalJsonError("not_canonical_json", `the body is not canonical: ${reason}`, {
      cause: error,
    });
  }
  // Both sides are valid Unicode here, so comparing the strings is comparing the UTF-8 bytes.
  if (canonical !== text) {
    throw new CanonicalJsonError(
      "not_canonical_json",
      "the body is JSON but not in RFC 8785 canonical form (member order, whitespace, number or string spelling, or a duplicate member)",
    );
  }
  return parsed;
}

function serialize(value: unknown, path: string, ancestors: Set<object>, depth: number): string {
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) {
        throw new CanonicalJsonError("non_finite_number", `${shown(path)} is not a finite number`);
      }
      // ECMAScript Number::toString is exactly the RFC 8785 number form, and String(-0) is "0".
      return String(value);
    case "string":
      return serializeString(value, path);
    case "object":
      if (value === null) return "null";
      return serializeContainer(value, path, ancestors, depth);
    default:
      // undefined, function, bigint, symbol: JSON.stringify would drop or throw inconsistently.
      throw new CanonicalJsonError(
        "unsupported_value",
        `${shown(path)} is a ${typeof value}, not a JSON value`,
      );
  }
}

function serializeString(text: string, path: string): string {
  if (LONE_SURROGATE.test(text)) {
    throw new CanonicalJsonError(
      "lone_surrogate",
      `${shown(path)} holds an unpaired UTF-16 surrogate`,
    );
  }
  // For valid Unicode, JSON.stringify escapes exactly what RFC 8785 §3.2.2.2 requires, with
  // lower-case hex (ECMA-262 QuoteJSONString, which the RFC is built on).
  return JSON.stringify(text);
}

function serializeContainer(
  value: object,
  path: string,
  ancestors: Set<object>,
  depth: number,
): string {
  if (depth >= MAX_CANONICAL_DEPTH) {
    throw new CanonicalJsonError(
      "too_deep",
      `${shown(path)} is nested deeper than ${MAX_CANONICAL_DEPTH} levels`,
    );
  }
  if (ancestors.has(value)) {
    throw new CanonicalJsonError("cyclic_value", `${shown(path)} contains itself`);
  }
  ancestors.add(value);
  try {
    if (Array.isArray(value)) {
      const items: string[] = [];
      // An index loop, not map(): a hole reads as undefined and is refused, not skipped.
      for (let index = 0; index < value.length; index += 1) {
        items.push(serialize(value[index], `${path}[${index}]`, ancestors, depth + 1));
      }
      return `[${items.join(",")}]`;
    }
    const prototype = Object.getPrototypeOf(value);
    // A Date, Map, class instance or boxed primitive has no single obvious JSON form (toJSON,
    // silently empty "{}"): the caller converts it explicitly.
    if (prototype !== Object.prototype && prototype !== null) {
      throw new CanonicalJsonError(
        "unsupported_value",
        `${shown(path)} is not a plain object or array`,
      );
    }
    if (Object.getOwnPropertySymbols(value).length > 0) {
      throw new CanonicalJsonError("unsupported_value", `${shown(path)} has a symbol-keyed member`);
    }
    const record = value as Record<string, unknown>;
    const names = Object.keys(record).sort(compareCodeUnits);
    const members: string[] = [];
    for (const name of names) {
      const memberPath = `${path}.${name}`;
      members.push(
        `${serializeString(name, memberPath)}:${serialize(record[name], memberPath, ancestors, depth + 1)}`,
      );
    }
    return `{${members.join(",")}}`;
  } finally {
    // Only ancestors count: the same object twice in siblings is a DAG, not a cycle.
    ancestors.delete(value);
  }
}

/** RFC 8785 §3.2.3: compare member names as arrays of UTF-16 code units (not code points). */
function compareCodeUnits(left: string, right: string): number {
  if (left < right) return -1;
  return left > right ? 1 : 0;
}

/**
 * The JSON path for an error message, shortened: member names come from untrusted bodies, and
 * a megabyte name must not end up in every log line.
 */
function shown(path: string): string {
  return path.length <= 120 ? path : `${path.slice(0, 60)}…${path.slice(-40)}`;
}
