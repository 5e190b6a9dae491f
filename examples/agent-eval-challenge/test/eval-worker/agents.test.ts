// The reference agents against the reference task set's checkers, run directly with the host's
// python3 exactly as the harness runs them (the TASK_* environment, the input a file, the output
// a file): good solves 8 of 8, half 4 of 8, escape none. The container runs are in
// run-trial.test.ts; this one pins the agents themselves.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkTaskOutput, type EvalTask } from "../../src/eval/task-set.js";
import { AGENTS_DIR, type AgentName, loadReferenceTaskSet } from "./eval-worker-kit.js";

const taskSet = await loadReferenceTaskSet();
const work = mkdtempSync(join(tmpdir(), "agent-eval-agents-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Run agents/<name> on `task` with python3; the checker's score and what it wrote. */
function solve(name: AgentName, task: EvalTask): Promise<{ score: 0 | 1; output: string }> {
  const dir = mkdtempSync(join(work, `${name}-${task.id}-`));
  const input = join(dir, "input");
  const output = join(dir, "output");
  writeFileSync(input, task.input);
  return new Promise((resolve, reject) => {
    execFile(
      "python3",
      [join(AGENTS_DIR, name, "agent.py")],
      {
        cwd: dir,
        timeout: 20_000,
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          TASK_ID: task.id,
          TASK_INSTRUCTIONS: task.instructions,
          TASK_INPUT: input,
          TASK_OUTPUT: output,
        },
      },
      (error, _stdout, stderr) => {
        if (error !== null) return reject(new Error(`${name} on ${task.id}: ${stderr}`));
        const bytes = readFileSync(output);
        resolve({ score: checkTaskOutput(task, bytes), output: bytes.toString("utf8") });
      },
    );
  });
}

async function scores(name: AgentName): Promise<Record<string, number>> {
  const solved = await Promise.all(taskSet.tasks.map((task) => solve(name, task)));
  return Object.fromEntries(taskSet.tasks.map((task, index) => [task.id, solved[index]!.score]));
}

describe("the reference agents against the task set's checkers", () => {
  it("the task set has the 8 tasks the agents are written for", () => {
    expect(taskSet.tasks.map((task) => task.id)).toEqual([
      "reverse-lines",
      "uppercase",
      "word-count",
      "sort-numbers",
      "csv-to-json",
      "dedupe-lines",
      "sum-column",
      "rot13-decode",
    ]);
  });

  it("agents/good solves all 8", async () => {
    const good = await scores("good");
    expect(
      Object.values(good).every((score) => score === 1),
      JSON.stringify(good),
    ).toBe(true);
  });

  it("agents/half solves exactly 4 and writes a wrong answer for the others", async () => {
    const half = await scores("half");
    expect(half).toEqual({
      "reverse-lines": 1,
      uppercase: 1,
      "word-count": 1,
      "sort-numbers": 0,
      "csv-to-json": 0,
      "dedupe-lines": 1,
      "sum-column": 0,
      "rot13-decode": 0,
    });
  });

  it("agents/escape solves none: it writes a report of what it tried instead", async () => {
    for (const task of taskSet.tasks) {
      const { score, output } = await solve("escape", task);
      expect(score).toBe(0);
      const report = JSON.parse(output) as { secrets: object; network: object };
      expect(Object.keys(report.secrets)).toContain("EVAL_RUN_TOKEN");
      expect(Object.keys(report.network).length).toBeGreaterThan(0);
    }
  }, 60_000);
});
