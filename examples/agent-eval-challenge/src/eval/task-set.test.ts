import { describe, expect, it } from "vitest";
import { checkTaskOutput, loadTaskSet } from "./task-set.js";

const TASK_SET = new URL("../../tasks/task-set.json", import.meta.url);

describe("the shipped task set", () => {
  it("has at least 8 tasks whose expected outputs pass their checkers and whose inputs do not", async () => {
    const set = await loadTaskSet(TASK_SET);
    expect(set.tasks.length).toBeGreaterThanOrEqual(8);
    expect(set.revision_id).toMatch(/^[0-9a-f]{64}$/);
    for (const task of set.tasks) {
      expect([task.id, checkTaskOutput(task, Buffer.from(task.checker.expected))]).toEqual([
        task.id,
        1,
      ]);
      // Echoing the input back is never a correct answer.
      expect([task.id, checkTaskOutput(task, Buffer.from(task.input))]).toEqual([task.id, 0]);
    }
  });

  it("compares text with CRLF as LF and trailing whitespace ignored, JSON by value", async () => {
    const set = await loadTaskSet(TASK_SET);
    const reverse = set.tasks.find((task) => task.id === "reverse-lines")!;
    expect(
      checkTaskOutput(reverse, Buffer.from("echo\r\ndelta\r\ncharlie\r\nbravo\r\nalpha\r\n\n")),
    ).toBe(1);
    expect(checkTaskOutput(reverse, Buffer.from("echo\ndelta\ncharlie\nalpha\nbravo\n"))).toBe(0);
    const csv = set.tasks.find((task) => task.id === "csv-to-json")!;
    const rows = JSON.parse(csv.checker.expected) as Record<string, string>[];
    const reordered = rows.map((row) => Object.fromEntries(Object.entries(row).reverse()));
    expect(checkTaskOutput(csv, Buffer.from(JSON.stringify(reordered, null, 2)))).toBe(1);
    expect(checkTaskOutput(csv, Buffer.from("not json"))).toBe(0);
    expect(checkTaskOutput(csv, Buffer.from(JSON.stringify(rows.slice(1))))).toBe(0);
  });
});
