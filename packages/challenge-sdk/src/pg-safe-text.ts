/**
 * Text PostgreSQL can store, whatever wrote it. A JavaScript string can hold two things
 * PostgreSQL refuses: the NUL character (a `text` value answers 22021, a `\u0000` escape in
 * `jsonb` 22P05) and a lone UTF-16 surrogate (JSON.stringify writes it as a `\udc00` escape,
 * which `jsonb` refuses; as a `text` parameter the driver's UTF-8 encoder silently turns it into
 * U+FFFD). Text that came from a submission (an evaluation's report, an exception's message, a
 * file name, metadata, a reviewer's answer) can hold either, and a write that fails on it is
 * retried as if the platform had failed: clean such text here, in one place, before it is
 * stored. Both are replaced with U+FFFD, the replacement character, as a decoder does with
 * bytes it cannot read; everything else (U+FFFF and the other noncharacters included) is kept.
 */

// Without the `u` flag a regular expression walks UTF-16 code units, so a surrogate is one unit:
// a high one not followed by a low one, or a low one not preceded by a high one, is alone.
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** What {@link pgSafeText} puts in place of each character PostgreSQL cannot store. */
export const PG_REPLACEMENT_CHARACTER = "\uFFFD";

/**
 * `text` with every NUL and lone surrogate replaced by U+FFFD, so PostgreSQL stores it as `text`
 * and inside `jsonb`. The same string comes back when there was nothing to replace.
 * @example await sql`update submissions set error = ${pgSafeText(report.error.message)}`;
 */
export function pgSafeText(text: string): string {
  return text.replace(UNSTORABLE, PG_REPLACEMENT_CHARACTER);
}

/**
 * `value` as JSON.stringify would write it (toJSON applied, undefined and functions dropped,
 * non-finite numbers null), with {@link pgSafeText} applied to every string in it, object keys
 * included, at any depth: what a `jsonb` column stores without refusing. Throws what
 * JSON.stringify throws (a cycle, a BigInt) and a TypeError for a value with no JSON form.
 * @example await sql`update submissions set report = ${sql.json(pgSafeJson(report))}`;
 */
export function pgSafeJson<T>(value: T): T {
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError(`pgSafeJson: ${typeof value} has no JSON form`);
  // JSON.stringify escapes NUL and lone surrogates as \u sequences, so `text` itself is clean:
  // the replacement happens on the parsed strings, where the characters are themselves again.
  return JSON.parse(text, (_key, item: unknown) => {
    if (typeof item === "string") return pgSafeText(item);
    if (item === null || typeof item !== "object" || Array.isArray(item)) return item;
    const keys = Object.keys(item);
    if (keys.every((key) => pgSafeText(key) === key)) return item;
    // Object.fromEntries defines own properties, so a "__proto__" key stays a plain key.
    return Object.fromEntries(
      keys.map((key) => [pgSafeText(key), (item as Record<string, unknown>)[key]]),
    );
  }) as T;
}
