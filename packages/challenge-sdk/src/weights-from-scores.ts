import { normalizeWeights } from "./normalize-weights.js";

/** One scored result: whose it is, its score, and what breaks ties between equal scores. */
export interface ScoreEntry {
  hotkey: string;
  /** Higher is better. Non-finite and `<= 0` scores never earn weight. */
  score: number;
  /** When the result was submitted; the earlier wins a tie under `winnerTakesAll`. */
  at?: Date | string | undefined;
  /**
   * A stable id (e.g. the submission id); the smaller wins a tie left after `at`. Ids made of
   * digits (or numbers) compare as numbers, so "9" comes before "10"; others as strings.
   */
  id?: string | number | undefined;
}

/** Options of {@link weightsFromScores}. */
export interface WeightsFromScoresOptions {
  /**
   * Give the whole weight to one hotkey: the best score, ties broken by the earliest `at`
   * (entries without one last), then the smallest `id` (without one last), then the smallest
   * hotkey. Default false (proportional).
   */
  winnerTakesAll?: boolean;
  /** Under `winnerTakesAll`, scores within this distance of the top one count as a tie (default 0). */
  epsilon?: number;
}

interface Best {
  hotkey: string;
  score: number;
  at: number;
  id: string | undefined;
}

const DIGITS = /^\d+$/;

function timeOf(at: ScoreEntry["at"], hotkey: string): number {
  if (at === undefined || at === null) return Number.POSITIVE_INFINITY;
  const ms = at instanceof Date ? at.getTime() : Date.parse(at);
  if (Number.isNaN(ms))
    throw new TypeError(`weightsFromScores: invalid \`at\` for hotkey ${hotkey}`);
  return ms;
}

function compareText(a: string | undefined, b: string | undefined): number {
  // An entry without an id loses the tie to one with an id: it has nothing stable to offer.
  if (a === b) return 0;
  if (a === undefined) return 1;
  if (b === undefined) return -1;
  if (DIGITS.test(a) && DIGITS.test(b)) {
    // Database ids as text: compare as numbers of any size (length first, leading zeros aside).
    const x = a.replace(/^0+(?=\d)/, "");
    const y = b.replace(/^0+(?=\d)/, "");
    if (x.length !== y.length) return x.length < y.length ? -1 : 1;
    if (x !== y) return x < y ? -1 : 1;
  }
  return a < b ? -1 : 1;
}

/** Orders two results of equal score: earliest `at`, then smallest `id`, then smallest hotkey. */
function earlier(a: Best, b: Best): number {
  if (a.at !== b.at) return a.at < b.at ? -1 : 1;
  return compareText(a.id, b.id) || compareText(a.hotkey, b.hotkey);
}

/**
 * Weights from scored results: each hotkey's BEST score counts once, non-finite and `<= 0`
 * scores are dropped, and the result is normalised to sum to 1 (`{}` when nothing scored).
 * Ties: in the default proportional mode equal best scores get equal weight (nobody is
 * dropped); with `winnerTakesAll` one hotkey gets 1, the earliest `at`, then smallest `id`,
 * then smallest hotkey winning among the tied.
 * @example weightsFromScores([{ hotkey: "a", score: 3 }, { hotkey: "b", score: 1 }]) // { a: 0.75, b: 0.25 }
 */
export function weightsFromScores(
  scores: Iterable<ScoreEntry>,
  options: WeightsFromScoresOptions = {},
): Record<string, number> {
  const epsilon = options.epsilon ?? 0;
  if (!Number.isFinite(epsilon) || epsilon < 0) {
    throw new RangeError("weightsFromScores: `epsilon` must be a finite number >= 0");
  }
  const best = new Map<string, Best>();
  for (const entry of scores) {
    if (typeof entry.hotkey !== "string" || entry.hotkey === "") {
      throw new TypeError("weightsFromScores: every entry needs a non-empty string `hotkey`");
    }
    const at = timeOf(entry.at, entry.hotkey);
    const { score } = entry;
    if (typeof score !== "number" || !Number.isFinite(score) || score <= 0) continue;
    const id = entry.id === undefined || entry.id === null ? undefined : String(entry.id);
    const candidate: Best = { hotkey: entry.hotkey, score, at, id };
    const current = best.get(entry.hotkey);
    // A hotkey's own repeated best score keeps its earliest result, for the tie-break.
    if (
      !current ||
      score > current.score ||
      (score === current.score && earlier(candidate, current) < 0)
    ) {
      best.set(entry.hotkey, candidate);
    }
  }
  if (best.size === 0) return {};
  const results = [...best.values()];
  if (!options.winnerTakesAll) {
    return normalizeWeights(Object.fromEntries(results.map((r) => [r.hotkey, r.score])));
  }
  const top = Math.max(...results.map((r) => r.score));
  const tied = results.filter((r) => r.score >= top - epsilon);
  tied.sort(earlier);
  return Object.fromEntries([[tied[0]!.hotkey, 1]]);
}
