/**
 * A task family: what the eval scores instead of fixed tasks. Its generator draws one instance's
 * input from a seeded source, and its checker decides from that input alone whether an output is
 * a correct answer (it recomputes what the answer must be, it never looks one up), so a family
 * has no expected answer to leak and an agent can only score by solving the family.
 *
 * The reference families are in reference-families.ts; an operator adds private ones from a
 * mounted directory (operator-families.ts), under the same contract.
 */
import { canonicalJson } from "../../crypto/index.js";
import type { SeededRandom } from "./seeded-random.js";

export interface TaskFamily {
  /** The task id in plans and results, and the agent's TASK_ID. */
  id: string;
  title: string;
  /** What the agent is told (TASK_INSTRUCTIONS). */
  instructions: string;
  /** The size and shape of every instance, stated (docs, and the fairness test's claim). */
  bounds: string;
  /** One instance's input, from `random` only. */
  generate(random: SeededRandom): string;
  /** Whether `output` is a correct answer for `input`. */
  check(input: string, output: string): boolean;
}

/** Text as checkers compare it: CRLF as LF, trailing whitespace ignored. */
export const normalizedText = (text: string): string => text.replace(/\r\n/g, "\n").trimEnd();

/** The exact_text rule: equal after normalisation. */
export const sameText = (output: string, expected: string): boolean =>
  normalizedText(output) === normalizedText(expected);

/** The json_equal rule: the output parses to a JSON value equal to `expected` (key order free). */
export function sameJson(output: string, expected: unknown): boolean {
  try {
    return canonicalJson(JSON.parse(output)) === canonicalJson(expected as never);
  } catch {
    return false;
  }
}

/** The lines of `text` (a final newline ends the last line, it does not start another). */
export function linesOf(text: string): string[] {
  const lines = normalizedText(text) === "" ? [] : text.replace(/\r\n/g, "\n").split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

/** Lines back to text, each ended by a newline. */
export const textOf = (lines: readonly string[]): string => lines.map((l) => `${l}\n`).join("");
