// The families as the evaluator and a replay use them: the same seed draws the same inputs, two
// seeds draw different ones, every instance keeps to its family's stated bounds (comparable
// difficulty), echoing the input never passes, and the public examples are the public seed's
// instances with answers their checkers accept.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { checkInstance, instanceInput, REFERENCE_FAMILIES } from "./index.js";
import { linesOf } from "./task-family.js";

const seedOf = (text: string) => createHash("sha256").update(text).digest();
const SEEDS = Array.from({ length: 300 }, (_, i) => seedOf(`families-test-${i}`));
const PUBLIC_EXAMPLES_SEED = seedOf("platform/agent-eval/public-examples/v1");

const between = (value: number, min: number, max: number) => value >= min && value <= max;
const words = (text: string) => text.split(/\s+/).filter((word) => word !== "");

/** Each family's bounds (as its `bounds` text states them), checked on one input. */
const WITHIN_BOUNDS: Record<string, (input: string) => boolean> = {
  "reverse-lines": (input) =>
    between(linesOf(input).length, 8, 16) &&
    new Set(linesOf(input)).size === linesOf(input).length &&
    linesOf(input).every((line) => /^[a-z]{3,8}( [a-z]{3,8}){0,3}$/.test(line)),
  uppercase: (input) =>
    between(linesOf(input).length, 3, 6) &&
    linesOf(input).every((line) => between(words(line).length, 6, 12)) &&
    /[a-z]/.test(input),
  "word-count": (input) =>
    between(words(input).length, 40, 400) &&
    linesOf(input).every((line) => between(words(line).length, 1, 12)),
  "sort-numbers": (input) =>
    between(linesOf(input).length, 10, 20) &&
    linesOf(input).every((line) => /^-?\d+$/.test(line) && between(Number(line), -1000, 1000)),
  "csv-to-json": (input) => {
    const [header = "", ...rows] = linesOf(input);
    const names = header.split(",");
    return (
      between(names.length, 3, 4) &&
      new Set(names).size === names.length &&
      between(rows.length, 3, 6) &&
      rows.every((row) => row.split(",").length === names.length && !/["']/.test(row))
    );
  },
  "dedupe-lines": (input) =>
    between(linesOf(input).length, 10, 20) && between(new Set(linesOf(input)).size, 1, 8),
  "sum-column": (input) => {
    const [header = "", ...rows] = linesOf(input);
    const amount = header.split(",").indexOf("amount");
    return (
      [...header.split(",")].sort().join(",") === "amount,date,item" &&
      between(rows.length, 4, 10) &&
      rows.every((row) => /^\d{1,3}\.\d\d$/.test(row.split(",")[amount] ?? ""))
    );
  },
  "rot13-decode": (input) =>
    linesOf(input).length === 1 &&
    between(words(input).length, 5, 10) &&
    /^[A-Z].*\.$/.test(input.trim()),
};

describe("the reference task families", () => {
  it("are the eight former tasks, each with stated bounds", () => {
    expect(REFERENCE_FAMILIES.map((family) => family.id)).toEqual(Object.keys(WITHIN_BOUNDS));
    for (const family of REFERENCE_FAMILIES) expect(family.bounds.length).toBeGreaterThan(10);
  });

  it("draw the same input from the same seed and trial, another from another", () => {
    for (const family of REFERENCE_FAMILIES) {
      const [a, b] = SEEDS;
      expect(instanceInput(family, a!, 1)).toBe(instanceInput(family, a!, 1));
      expect(instanceInput(family, a!, 1)).not.toBe(instanceInput(family, b!, 1));
      expect(instanceInput(family, a!, 1)).not.toBe(instanceInput(family, a!, 2));
    }
  });

  it("keep every instance within its bounds, distinct, and never answered by an echo", () => {
    for (const family of REFERENCE_FAMILIES) {
      const inputs = SEEDS.map((seed) => instanceInput(family, seed, 1));
      const outside = inputs.filter((input) => !WITHIN_BOUNDS[family.id]!(input));
      expect([family.id, outside.slice(0, 1)]).toEqual([family.id, []]);
      expect(new Set(inputs).size).toBe(inputs.length);
      const echoes = inputs.filter((input) => checkInstance(family, input, Buffer.from(input)));
      expect([family.id, echoes.length]).toEqual([family.id, 0]);
      // Same difficulty, stated as size: no instance is over 3 times the family's median size.
      const sizes = inputs.map((input) => input.length).sort((x, y) => x - y);
      expect(sizes.at(-1)!).toBeLessThanOrEqual(3 * sizes[sizes.length >> 1]! + 64);
    }
  });

  it("word-count: the count is uniform over 40..400, so no guess beats 1/361 by much", () => {
    const family = REFERENCE_FAMILIES.find((f) => f.id === "word-count")!;
    const counts = new Map<number, number>();
    const n = 3000;
    for (let i = 0; i < n; i += 1) {
      const count = words(instanceInput(family, seedOf(`uniform-${i}`), 1)).length;
      counts.set(count, (counts.get(count) ?? 0) + 1);
    }
    // Expected 8.3 per count; the most frequent stays well under 4 times that.
    expect(Math.max(...counts.values())).toBeLessThan(30);
  });

  it("tasks/task-set.json holds the public seed's instances 1 and 2, with accepted answers", () => {
    const document = JSON.parse(
      readFileSync(new URL("../../../tasks/task-set.json", import.meta.url), "utf8"),
    ) as {
      schema_version: string;
      tasks: {
        id: string;
        instructions: string;
        examples: { input: string; expected: string }[];
      }[];
    };
    expect(document.schema_version).toBe("task-examples/v1");
    expect(document.tasks.map((task) => task.id)).toEqual(REFERENCE_FAMILIES.map((f) => f.id));
    for (const [index, family] of REFERENCE_FAMILIES.entries()) {
      const task = document.tasks[index]!;
      expect(task.instructions).toBe(family.instructions);
      task.examples.forEach((example, i) => {
        expect(example.input).toBe(instanceInput(family, PUBLIC_EXAMPLES_SEED, i + 1));
        expect([
          family.id,
          checkInstance(family, example.input, Buffer.from(example.expected)),
        ]).toEqual([family.id, 1]);
      });
    }
  });

  it("judge text with CRLF as LF and trailing whitespace ignored, JSON by value", () => {
    const reverse = REFERENCE_FAMILIES.find((f) => f.id === "reverse-lines")!;
    expect(checkInstance(reverse, "a\nb\nc\n", Buffer.from("c\r\nb\r\na\r\n\n  "))).toBe(1);
    expect(checkInstance(reverse, "a\nb\nc\n", Buffer.from("c\na\nb\n"))).toBe(0);
    const csv = REFERENCE_FAMILIES.find((f) => f.id === "csv-to-json")!;
    const input = "name,city\nAda,London\nAlan,Wilmslow\n";
    const rows = [
      { city: "London", name: "Ada" },
      { name: "Alan", city: "Wilmslow" },
    ];
    expect(checkInstance(csv, input, Buffer.from(JSON.stringify(rows, null, 2)))).toBe(1);
    expect(checkInstance(csv, input, Buffer.from(JSON.stringify(rows.slice(1))))).toBe(0);
    expect(checkInstance(csv, input, Buffer.from("not json"))).toBe(0);
  });
});
