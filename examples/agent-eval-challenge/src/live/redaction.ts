/**
 * Secrets out of log text before it is stored or shown (rule 21): API keys, bearer tokens and
 * authorization headers, this service's run and attempt token shapes, generic `name=value`
 * secrets, and the miner's own env values in every spelling of env-spellings.ts, whole or cut
 * at a line's end or start (cut-edges.ts).
 *
 * Every pass is linear in the text. Production once spent 91 s on a 61-character line in a
 * redaction regex (catastrophic backtracking on an unauthenticated route), so the rules here are:
 * no nested quantifiers; every pattern starts on a literal or, with a lookbehind boundary, only at
 * the start of a run, so a failed attempt at one position never rescans what another attempt
 * scanned; an unbounded class is never followed by a literal it contains; and where two classes
 * could trade characters the last one may match nothing, so the match cannot fail after its scan.
 * The generic `name=value` pass is a plain scan; the env spellings are plain substring
 * searches and the cut-edge check is Knuth-Morris-Pratt. test/live/redaction.test.ts checks that
 * each pass's time grows linearly on adversarial lines of 2, 16 and 64 KiB.
 */

import { redactCutEdges } from "./cut-edges.js";
import { MIN_ENV_VALUE_LENGTH } from "./env-spellings.js";

export { envSpellings, MIN_ENV_VALUE_LENGTH } from "./env-spellings.js";

/** What a secret is replaced with. */
export const REDACTED = "[REDACTED]";

/** The shortest value the generic `name=value` pass treats as a secret. */
const MIN_GENERIC_SECRET_LENGTH = 6;

/** One shape of secret: a global, linear-time pattern and what replaces a match. */
export interface SecretPattern {
  name: string;
  pattern: RegExp;
  replacement: string;
}

/** A shape whose matches become `replacement` ([REDACTED] unless it keeps a prefix). */
const shape = (name: string, pattern: RegExp, replacement = REDACTED): SecretPattern => ({
  name,
  pattern,
  replacement,
});

/**
 * The shapes, each anchored on a literal prefix with a left boundary. A body like
 * `[A-Za-z0-9_-]{16,}` cannot fail after a long scan (16 characters are enough to succeed), and
 * where a second literal follows an unbounded class (the JWT's dot) the class excludes it and
 * the left boundary makes attempts start only at the beginning of a run.
 */
export const SECRET_PATTERNS: readonly SecretPattern[] = [
  // OpenAI (sk-..., sk-proj-...), Anthropic (sk-ant-...) and the many keys shaped alike.
  shape("sk-key", /(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{16,}/g),
  shape("aws-access-key-id", /(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])/g),
  shape("github-token", /(?<![A-Za-z0-9])gh[pousr]_[A-Za-z0-9]{20,}/g),
  shape("github-fine-grained-token", /(?<![A-Za-z0-9])github_pat_[A-Za-z0-9_]{20,}/g),
  shape("slack-token", /(?<![A-Za-z0-9])xox[abprs]-[A-Za-z0-9-]{10,}/g),
  shape("google-api-key", /(?<![A-Za-z0-9])AIza[A-Za-z0-9_-]{35}/g),
  // header.payload[.signature]: both base64url JSON objects start with "eyJ".
  shape("jwt", /(?<![A-Za-z0-9_.-])eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_.-]{8,}/g),
  // This service's capability tokens (EVAL_RUN_TOKEN, attempt and review tokens):
  // `<id of 1-64 base64url characters>.<43-character MAC>`.
  shape(
    "capability-token",
    /(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{1,64}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g,
  ),
  // An authorization-like header or field: everything up to the end of its value.
  shape(
    "authorization-header",
    /(?<![A-Za-z0-9])((?:proxy-)?authorization|x-api-key|api-key|x-auth-token|cookie)(["']?[ \t]*[:=][ \t]*["']?)[^\r\n"'`,;}]*/gi,
    `$1$2${REDACTED}`,
  ),
  shape("bearer-token", /(?<![A-Za-z0-9])(bearer)[ \t]+[^\s"'`,;<>()[\]{}]+/gi, `$1 ${REDACTED}`),
  // https://user:password@host
  shape("url-credentials", /(:\/\/)[^\s/:@]{1,128}:[^\s/@]{1,128}@/g, `$1${REDACTED}@`),
  shape("private-key-block", /-----BEGIN [A-Z]{0,20} ?PRIVATE KEY-----[^-]*/g),
];

/** What to redact beyond the shapes: the miner's env values and any known live token. */
export interface RedactionSecrets {
  /**
   * Exact strings to remove (`envSpellings` of the env values; strings shorter than
   * {@link MIN_ENV_VALUE_LENGTH} are kept), also where a line ends with the start of one or
   * starts with the end of one (cut-edges.ts).
   */
  exact?: readonly string[];
}

/**
 * `text` (one line) with every known secret replaced by {@link REDACTED}. Exact values go first
 * (longest first, so a value containing another, or a spelling containing a shorter one, is
 * removed whole), then the pieces of them at the line's two ends, then the shapes, then the
 * generic `name=value` scan. Redact a line before cutting it: a cut first could leave a piece
 * of a value that only the edge check below still recognises, and only at the cut.
 */
export function redactSecrets(text: string, secrets: RedactionSecrets = {}): string {
  let out = text;
  const exact = sortedSecrets(secrets.exact ?? []);
  // split/join is a plain substring search (no pattern syntax): linear in practice.
  for (const value of exact) if (out.includes(value)) out = out.split(value).join(REDACTED);
  out = redactCutEdges(out, exact, REDACTED);
  for (const { pattern, replacement } of SECRET_PATTERNS) {
    pattern.lastIndex = 0;
    out = out.replace(pattern, replacement);
  }
  return redactNamedSecrets(out);
}

// A request's lines share one list of spellings: it is sorted once, not once a line.
const sorted = new WeakMap<readonly string[], string[]>();

/** The exact strings worth removing, longest first, each once. */
function sortedSecrets(values: readonly string[]): string[] {
  let list = sorted.get(values);
  if (list === undefined) {
    list = [...new Set(values)]
      .filter((value) => value.length >= MIN_ENV_VALUE_LENGTH)
      .sort((a, b) => b.length - a.length);
    sorted.set(values, list);
  }
  return list;
}

const NAME_CHAR = /[A-Za-z0-9_.-]/;
// What a value is made of: anything but whitespace, quotes and the punctuation that ends a
// value in JSON, query strings, shell lines and logfmt.
const VALUE_STOP = new Set([..." \t\r\n\"'`,;&<>(){}[]"]);
const MAX_NAME_LENGTH = 64;
// Quotes and spaces skipped between a name, its separator and its value.
const MAX_GAP = 4;

/** Whether a field called `name` holds a secret (API_KEY, db_password, "clientSecret", ...). */
export function isSecretName(name: string): boolean {
  const flat = name.toLowerCase().replace(/[-_.]/g, "");
  // A hotkey or coldkey is an ss58 address: public, and what a reader of the logs needs.
  if (flat.endsWith("hotkey") || flat.endsWith("coldkey")) return false;
  return (
    flat.endsWith("key") ||
    flat.endsWith("auth") ||
    ["secret", "token", "passw", "pwd", "credential", "apikey", "accesskey", "privatekey"].some(
      (word) => flat.includes(word),
    )
  );
}

/**
 * The generic pass: at each `=` or `:`, look back (at most 64 characters) for a secret-looking
 * name and, if there is one, replace the value after it. The scan resumes after a replaced value,
 * so no character is scanned forward twice: linear.
 */
export function redactNamedSecrets(text: string): string {
  let out = "";
  let copiedUpTo = 0;
  for (let i = 0; i < text.length; i++) {
    const separator = text[i];
    if (separator !== "=" && separator !== ":") continue;
    let nameEnd = i;
    for (let gap = 0; gap < MAX_GAP && nameEnd > 0 && isGap(text[nameEnd - 1]!); gap++) nameEnd--;
    let nameStart = nameEnd;
    while (
      nameStart > copiedUpTo &&
      nameEnd - nameStart < MAX_NAME_LENGTH &&
      NAME_CHAR.test(text[nameStart - 1]!)
    ) {
      nameStart--;
    }
    if (nameStart === nameEnd || !isSecretName(text.slice(nameStart, nameEnd))) continue;
    let valueStart = i + 1;
    for (
      let gap = 0;
      gap < MAX_GAP && valueStart < text.length && isGap(text[valueStart]!);
      gap++
    ) {
      valueStart++;
    }
    let valueEnd = valueStart;
    while (valueEnd < text.length && !VALUE_STOP.has(text[valueEnd]!)) valueEnd++;
    const value = text.slice(valueStart, valueEnd);
    // Counts are not secrets: "prompt_tokens: 123456" stays.
    if (value.length < MIN_GENERIC_SECRET_LENGTH || /^[0-9]+$/.test(value) || value === REDACTED) {
      continue;
    }
    out += text.slice(copiedUpTo, valueStart) + REDACTED;
    copiedUpTo = valueEnd;
    i = valueEnd - 1;
  }
  return copiedUpTo === 0 ? text : out + text.slice(copiedUpTo);
}

function isGap(character: string): boolean {
  return character === " " || character === "\t" || character === '"' || character === "'";
}

/** Keys whose values say how well an agent did: never on a public live view (rule 14). */
export function isScoreShapedKey(key: string): boolean {
  const flat = key.toLowerCase().replace(/[-_.]/g, "");
  return (
    ["score", "weight", "reward", "passrate", "accuracy"].some((word) => flat.includes(word)) ||
    flat === "passed" ||
    flat === "pass"
  );
}

/**
 * A copy of `value` for a public view: score-shaped keys removed at every depth. With `redact`,
 * every string also goes through the shape redaction (for payloads written by routes that store
 * short messages; attempt log lines were redacted, env values included, before being written).
 */
export function publicPayload(value: unknown, options: { redact: boolean }, depth = 0): unknown {
  if (typeof value === "string") return options.redact ? redactSecrets(value) : value;
  if (value === null || typeof value !== "object") return value;
  // Stored payloads are shallow; a deep one is cut rather than walked without end.
  if (depth >= 16) return null;
  if (Array.isArray(value)) return value.map((item) => publicPayload(item, options, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    if (!isScoreShapedKey(key)) out[key] = publicPayload(item, options, depth + 1);
  }
  return out;
}
