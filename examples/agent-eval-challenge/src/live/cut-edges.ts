/**
 * The ends of a line where a secret was cut. A line that reached us cut short (a stream capped
 * in the container, a line capped by a worker that redacted after cutting, output split into
 * pieces) may end with the first part of a secret, or start with the last part, and an exact
 * match never sees it. So the end of a line that is a prefix of a secret, and the start that is
 * a suffix of one, are redacted too.
 *
 * Only secrets of {@link MIN_CUT_SECRET_LENGTH}+ characters are looked for, and only pieces of
 * {@link MIN_CUT_PIECE_LENGTH}+ characters: shorter pieces are what the exact pass already
 * leaves alone as a whole value (a line ending in "s" is not the start of every key in "s").
 *
 * Linear: each check runs Knuth-Morris-Pratt over at most as many characters as the secret is
 * long (after a native search for the line's last or first 4 characters in it, which rules out
 * nearly every secret), so a line costs at most the secrets' total length, whatever the line
 * and the secrets are made of.
 */

/** Secrets shorter than this are not looked for at a line's ends. */
export const MIN_CUT_SECRET_LENGTH = 8;
/** A piece shorter than this at a line's end is left: it says nothing about the secret. */
export const MIN_CUT_PIECE_LENGTH = 4;

/**
 * A cut of a multi-byte character decodes to U+FFFD (and a cut surrogate pair becomes one):
 * up to 3 of them may stand between the secret's piece and the line's end.
 */
const MAX_REPLACEMENT_CHARACTERS = 3;
const REPLACEMENT_CHARACTER = "\uFFFD";

/**
 * `line` with its end replaced by `replacement` where the end is the start of a secret, then
 * its start where it is the end of a secret (the longest piece of any secret at each end).
 */
export function redactCutEdges(
  line: string,
  secrets: readonly string[],
  replacement: string,
): string {
  const candidates = longEnough(secrets);
  if (candidates.length === 0 || line.length < MIN_CUT_PIECE_LENGTH) return line;
  let out = line;
  const tail = trailingReplacements(out);
  const beforeTail = out.slice(0, out.length - tail);
  // A piece of 4+ characters at the end holds the line's last 4 characters: a secret without
  // them is skipped after one native substring search.
  const last = beforeTail.slice(-MIN_CUT_PIECE_LENGTH);
  const end = longest(candidates, last, (secret) => suffixPrefixOverlap(beforeTail, secret));
  if (end >= MIN_CUT_PIECE_LENGTH) out = out.slice(0, beforeTail.length - end) + replacement;
  const head = leadingReplacements(out);
  const afterHead = out.slice(head);
  const first = afterHead.slice(0, MIN_CUT_PIECE_LENGTH);
  const start = longest(candidates, first, (secret) => suffixPrefixOverlap(secret, afterHead));
  if (start >= MIN_CUT_PIECE_LENGTH) out = replacement + afterHead.slice(start);
  return out;
}

// A request's lines share one list of secrets: it is filtered once, not once a line.
const filtered = new WeakMap<readonly string[], string[]>();

function longEnough(secrets: readonly string[]): string[] {
  let list = filtered.get(secrets);
  if (list === undefined) {
    list = secrets.filter((secret) => secret.length >= MIN_CUT_SECRET_LENGTH);
    filtered.set(secrets, list);
  }
  return list;
}

/** The longest overlap of any secret containing `needle` (the others cannot overlap 4+). */
function longest(
  secrets: readonly string[],
  needle: string,
  overlap: (secret: string) => number,
): number {
  if (needle.length < MIN_CUT_PIECE_LENGTH) return 0;
  let best = 0;
  for (const secret of secrets) if (secret.includes(needle)) best = Math.max(best, overlap(secret));
  return best;
}

function trailingReplacements(text: string): number {
  let count = 0;
  while (
    count < MAX_REPLACEMENT_CHARACTERS &&
    text[text.length - 1 - count] === REPLACEMENT_CHARACTER
  ) {
    count++;
  }
  return count;
}

function leadingReplacements(text: string): number {
  let count = 0;
  while (count < MAX_REPLACEMENT_CHARACTERS && text[count] === REPLACEMENT_CHARACTER) count++;
  return count;
}

/**
 * The length of the longest suffix of `text` that is a prefix of `pattern` (0 when none), in
 * time linear in the shorter of the two: the Knuth-Morris-Pratt automaton of the pattern's
 * first `n` characters run over the text's last `n`, where `n` bounds any overlap.
 * @example suffixPrefixOverlap("key is sk-pro", "sk-proj-1234") // 6
 */
export function suffixPrefixOverlap(text: string, pattern: string): number {
  const n = Math.min(text.length, pattern.length);
  if (n === 0) return 0;
  const failure = prefixFunction(pattern, n);
  let matched = 0;
  for (let i = text.length - n; i < text.length; i++) {
    const character = text[i];
    while (matched > 0 && (matched === n || pattern[matched] !== character)) {
      matched = failure[matched - 1]!;
    }
    if (pattern[matched] === character) matched++;
  }
  return matched;
}

/** KMP's prefix function of `pattern`'s first `n` characters. */
function prefixFunction(pattern: string, n: number): Int32Array {
  const failure = new Int32Array(n);
  let k = 0;
  for (let i = 1; i < n; i++) {
    while (k > 0 && pattern[i] !== pattern[k]) k = failure[k - 1]!;
    if (pattern[i] === pattern[k]) k++;
    failure[i] = k;
  }
  return failure;
}
