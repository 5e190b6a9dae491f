/**
 * The eight reference families (the former fixed tasks, now drawn per run). Every generator keeps
 * to its stated bounds, so two instances of a family differ in content, never in difficulty: the
 * same steps solve both, on inputs of the same size and shape (family-fairness.test.ts checks the
 * bounds over many seeds). Text is ASCII only, so every language's upper-casing and splitting
 * agree with the checker's. Inputs never contain a comma or quote inside a CSV value.
 */
import type { SeededRandom } from "./seeded-random.js";
import { linesOf, sameJson, sameText, type TaskFamily, textOf } from "./task-family.js";

const WORDS = [
  "agent",
  "bridge",
  "cable",
  "delta",
  "ember",
  "falcon",
  "garden",
  "harbor",
  "island",
  "jungle",
  "kettle",
  "lantern",
  "meadow",
  "nickel",
  "orbit",
  "pepper",
  "quartz",
  "river",
  "saddle",
  "timber",
  "umbrella",
  "velvet",
  "walnut",
  "yonder",
  "zephyr",
  "amber",
  "basket",
  "canyon",
  "dollar",
  "engine",
  "forest",
  "glacier",
  "honey",
  "ivory",
  "jacket",
  "kernel",
  "ladder",
  "marble",
  "needle",
  "oyster",
] as const;
const ITEMS = ["paper", "ink", "stamps", "tape", "folders", "pens", "labels", "toner"] as const;
const COLUMNS = ["name", "city", "team", "color", "size", "level", "code", "owner"] as const;
const PUNCTUATION = [".", ",", ";", "!", "?", ""] as const;

const lines = (random: SeededRandom, min: number, max: number, line: () => string) =>
  Array.from({ length: random.int(min, max) }, line);
const phrase = (random: SeededRandom, min: number, max: number) =>
  lines(random, min, max, () => random.pick(WORDS)).join(" ");

const rot13 = (text: string) =>
  text.replace(/[a-z]/gi, (c) => {
    const base = c <= "Z" ? 65 : 97;
    return String.fromCharCode(((c.charCodeAt(0) - base + 13) % 26) + base);
  });

/** `cents` as a decimal with two places, from integers only (no float rounding). */
const money = (cents: number) =>
  `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`;

const csvRows = (input: string) => {
  const [header = "", ...rows] = linesOf(input);
  const names = header.split(",");
  return rows.map((row) => {
    const values = row.split(",");
    return Object.fromEntries(names.map((name, i) => [name, values[i] ?? ""]));
  });
};

export const REFERENCE_FAMILIES: readonly TaskFamily[] = [
  {
    id: "reverse-lines",
    title: "Reverse the lines",
    instructions: "Write the lines of the input in reverse order, one per line.",
    bounds: "8-16 distinct lines of 1-4 lower-case words (3-8 letters)",
    generate: (random) => {
      const seen = new Set<string>();
      const count = random.int(8, 16);
      while (seen.size < count) {
        seen.add(lines(random, 1, 4, () => random.word(3, 8)).join(" "));
      }
      return textOf([...seen]);
    },
    check: (input, output) => sameText(output, textOf(linesOf(input).reverse())),
  },
  {
    id: "uppercase",
    title: "Upper-case the text",
    instructions: "Write the input with every letter in upper case; keep everything else as it is.",
    bounds: "3-6 lines of 6-12 words (lower case, some capitalised, digits and punctuation)",
    generate: (random) =>
      textOf(
        lines(
          random,
          3,
          6,
          () =>
            lines(random, 6, 12, () => {
              const word = random.pick(WORDS);
              const shaped = random.int(0, 3) === 0 ? word[0]!.toUpperCase() + word.slice(1) : word;
              return random.int(0, 7) === 0 ? String(random.int(0, 999)) : shaped;
            }).join(" ") + random.pick(PUNCTUATION),
        ),
      ),
    check: (input, output) => sameText(output, input.toUpperCase()),
  },
  {
    id: "word-count",
    title: "Count the words",
    instructions:
      "Write the number of whitespace-separated words in the input, as a decimal integer.",
    // The count is uniform over its range: the answer is a small integer, so a blind guess
    // (a canned one included) is right with probability 1/361 whatever it guesses, never more.
    bounds: "40-400 words (the count uniform), lines of 1-12, separated by 1-3 spaces or tabs",
    generate: (random) => {
      const rows: string[] = [];
      for (let left = random.int(40, 400); left > 0; ) {
        const count = Math.min(left, random.int(1, 12));
        left -= count;
        rows.push(
          lines(random, count, count, () => random.pick(WORDS))
            .map((word, i) => (i === 0 ? word : random.pick([" ", "  ", "\t", " \t "]) + word))
            .join(""),
        );
      }
      return textOf(rows);
    },
    check: (input, output) =>
      sameText(output, `${input.split(/\s+/).filter((word) => word !== "").length}\n`),
  },
  {
    id: "sort-numbers",
    title: "Sort the numbers",
    instructions:
      "The input has one integer per line. Write them sorted in ascending numeric order, one per line.",
    bounds: "10-20 integers in [-1000, 1000], repeats possible",
    generate: (random) => textOf(lines(random, 10, 20, () => String(random.int(-1000, 1000)))),
    check: (input, output) =>
      sameText(
        output,
        textOf(
          linesOf(input)
            .map(Number)
            .sort((a, b) => a - b)
            .map(String),
        ),
      ),
  },
  {
    id: "csv-to-json",
    title: "CSV to JSON",
    instructions:
      "The input is CSV with a header row. Write a JSON array with one object per data row, keyed by the header names; every value is a string.",
    bounds: "a header of 3-4 distinct names, 3-6 rows of words or integers (no quoting)",
    generate: (random) => {
      const names = random.shuffle(COLUMNS).slice(0, random.int(3, 4));
      const rows = lines(random, 3, 6, () =>
        names
          .map(() => (random.int(0, 2) === 0 ? String(random.int(1, 99)) : random.pick(WORDS)))
          .join(","),
      );
      return textOf([names.join(","), ...rows]);
    },
    check: (input, output) => sameJson(output, csvRows(input)),
  },
  {
    id: "dedupe-lines",
    title: "Remove duplicate lines",
    instructions:
      "Write the input's lines without repeats, keeping the first occurrence of each, in their original order.",
    bounds: "10-20 lines drawn from 4-8 distinct words (so at least 2 repeats)",
    generate: (random) => {
      const pool = random.shuffle(WORDS).slice(0, random.int(4, 8));
      return textOf(lines(random, 10, 20, () => random.pick(pool)));
    },
    check: (input, output) => sameText(output, textOf([...new Set(linesOf(input))])),
  },
  {
    id: "sum-column",
    title: "Sum a column",
    instructions:
      "The input is CSV with a header row. Write the sum of the `amount` column with exactly two decimals.",
    bounds: "4-10 rows of date, item, amount (0.00-999.99) with the columns in any order",
    generate: (random) => {
      const columns = random.shuffle(["date", "item", "amount"] as const);
      const rows = lines(random, 4, 10, () => {
        const cells = {
          date: `2026-${String(random.int(1, 12)).padStart(2, "0")}-${String(random.int(1, 28)).padStart(2, "0")}`,
          item: random.pick(ITEMS),
          amount: money(random.int(0, 99_999)),
        };
        return columns.map((column) => cells[column]).join(",");
      });
      return textOf([columns.join(","), ...rows]);
    },
    check: (input, output) => {
      // In cents, as integers: no floating-point sum decides a correct answer.
      const cents = csvRows(input).reduce(
        (sum, row) => sum + Math.round(Number(row.amount) * 100),
        0,
      );
      return sameText(output, `${money(cents)}\n`);
    },
  },
  {
    id: "rot13-decode",
    title: "Decode ROT13",
    instructions: "The input is English text encoded with ROT13. Write the decoded text.",
    bounds: "one sentence of 5-10 words, capitalised, ending with a full stop",
    generate: (random) => {
      const sentence = phrase(random, 5, 10);
      return `${rot13(sentence[0]!.toUpperCase() + sentence.slice(1))}.\n`;
    },
    check: (input, output) => sameText(output, rot13(input)),
  },
];
