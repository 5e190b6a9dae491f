/**
 * The spellings of the miner's env values that redaction removes from log lines: each value as
 * it is, and as an agent (or a library under it) prints it without meaning to hide anything:
 * escaped in JSON, URL-encoded, base64 and base64url (standalone, and inside a longer encoding
 * such as a `Basic` header), hex in either case, reversed, and `\uXXXX` escaped.
 *
 * What no list of spellings can reach (a value split in halves, spaced out, XORed, or in any
 * encoding not listed here) is why the live feed's safety does not rest on redaction: see
 * docs/challenges/agent-eval.md, "What redaction cannot do".
 */

/** Values (and spellings) shorter than this are not redacted: "1", "yes" would blank prose. */
export const MIN_ENV_VALUE_LENGTH = 4;

/**
 * The shortest base64 run taken from inside a longer encoding. Such a run is any stretch of
 * letters and digits; shorter ones turn up in ordinary text and data by chance.
 */
export const MIN_EMBEDDED_BASE64_LENGTH = 8;

/** Each value of `values` in every spelling below, deduplicated (values under 4 characters left out). */
export function envSpellings(values: readonly string[]): string[] {
  const spellings = new Set<string>();
  const add = (spelling: string, min = MIN_ENV_VALUE_LENGTH) => {
    if (spelling.length >= min) spellings.add(spelling);
  };
  for (const value of values) {
    if (value.length < MIN_ENV_VALUE_LENGTH) continue;
    // A multi-line value (a PEM key) reaches the events route one line at a time.
    for (const line of value.split(/\r?\n/)) if (line !== value) add(line);
    for (const spelling of valueSpellings(value)) add(spelling);
    const bytes = Buffer.from(value, "utf8");
    for (const alphabet of ["base64", "base64url"] as const) {
      for (const run of embeddedBase64(bytes, alphabet)) add(run, MIN_EMBEDDED_BASE64_LENGTH);
    }
  }
  return [...spellings];
}

/** The spellings of one value that are whole strings (no surrounding data needed). */
function valueSpellings(value: string): string[] {
  const bytes = Buffer.from(value, "utf8");
  const base64 = bytes.toString("base64");
  const hex = bytes.toString("hex");
  return [
    value,
    // Inside a JSON string, as JSON.stringify and most JSON writers escape it.
    JSON.stringify(value).slice(1, -1),
    // Python's json.dumps default (ensure_ascii): JSON escapes, and every non-ASCII unit as \u.
    unicodeEscaped(JSON.stringify(value).slice(1, -1), { all: false, upper: false }),
    encodeURIComponent(value),
    base64,
    base64.replace(/=+$/, ""),
    bytes.toString("base64url"),
    hex,
    hex.toUpperCase(),
    // By code point: a reversed surrogate pair would be two lone halves, not a character.
    [...value].reverse().join(""),
    unicodeEscaped(value, { all: true, upper: false }),
    unicodeEscaped(value, { all: true, upper: true }),
  ];
}

/** `text` with its UTF-16 units as `\uXXXX`: every one, or only those outside ASCII. */
function unicodeEscaped(text: string, options: { all: boolean; upper: boolean }): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (!options.all && unit < 0x80) {
      out += text[i];
      continue;
    }
    const digits = unit.toString(16).padStart(4, "0");
    out += `\\u${options.upper ? digits.toUpperCase() : digits}`;
  }
  return out;
}

/**
 * The base64 runs that spell `bytes` wherever they sit inside a longer encoded string. Base64
 * turns every 3 bytes into 4 characters, so the same bytes encode differently depending on
 * where they start in the data (its offset modulo 3): one run for each of the three offsets.
 * Each run keeps only the characters whose 6 bits all come from `bytes`; the characters at its
 * two ends mix in bits of the neighbouring data, so they cannot be known in advance. What a
 * redaction of the run leaves of the value is therefore those two edge characters: at most 4
 * bits of its first byte and 4 of its last, never enough to rebuild it.
 */
export function embeddedBase64(
  bytes: Buffer,
  alphabet: "base64" | "base64url" = "base64",
): string[] {
  const runs: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    // Zero bytes stand in for the unknown data before the value; the characters they touch
    // are cut off below, so their content does not matter.
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString(alphabet);
    const firstBit = 8 * offset;
    const endBit = 8 * (offset + bytes.length);
    runs.push(encoded.slice(Math.ceil(firstBit / 6), Math.floor(endBit / 6)));
  }
  return runs;
}
