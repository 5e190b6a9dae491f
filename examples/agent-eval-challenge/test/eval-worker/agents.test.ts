// The reference agents against the reference families, over many seeds, run directly with the
// host's python3 exactly as the harness runs them (the TASK_* environment, the input a file, the
// output a file): good solves every instance (1), half exactly its four families (0.5), escape
// none, and the canned-answers agent (answers from the public examples by input hash or TASK_ID)
// scores no more than an agent that answers at random. The container runs are in
// run-trial.test.ts; this one pins the agents themselves.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  checkInstance,
  instanceInput,
  REFERENCE_FAMILIES,
  seededRandom,
  type TaskFamily,
} from "../../src/eval/families/index.js";
import { AGENTS_DIR, type AgentName } from "./eval-worker-kit.js";

const work = mkdtempSync(join(tmpdir(), "agent-eval-agents-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Four runs' seeds, two trials each: 64 instances an agent. */
const SEEDS = Array.from({ length: 4 }, (_, i) =>
  createHash("sha256").update(`agents-test-run-${i}`).digest(),
);
const INSTANCES = SEEDS.flatMap((seed) =>
  REFERENCE_FAMILIES.flatMap((family) =>
    [1, 2].map((trial) => ({ family, input: instanceInput(family, seed, trial) })),
  ),
);

/** Run agents/<name> on one instance with python3; what it wrote. */
function answer(name: AgentName, family: TaskFamily, input: string): Promise<Buffer> {
  const dir = mkdtempSync(join(work, `${name}-${family.id}-`));
  writeFileSync(join(dir, "input"), input);
  return new Promise((resolve, reject) => {
    execFile(
      "python3",
      [join(AGENTS_DIR, name, "agent.py")],
      {
        cwd: dir,
        timeout: 20_000,
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          TASK_ID: family.id,
          TASK_INSTRUCTIONS: family.instructions,
          TASK_INPUT: join(dir, "input"),
          TASK_OUTPUT: join(dir, "output"),
        },
      },
      (error, _stdout, stderr) => {
        if (error !== null) return reject(new Error(`${name} on ${family.id}: ${stderr}`));
        resolve(readFileSync(join(dir, "output")));
      },
    );
  });
}

/** Per family, the share of its instances `name` solved (four at a time: two cores). */
async function scores(name: AgentName): Promise<Record<string, number>> {
  const passed: number[] = [];
  for (let i = 0; i < INSTANCES.length; i += 4) {
    const batch = INSTANCES.slice(i, i + 4);
    const outputs = await Promise.all(batch.map((x) => answer(name, x.family, x.input)));
    passed.push(...batch.map((x, j) => checkInstance(x.family, x.input, outputs[j]!)));
  }
  return perFamily(passed);
}

function perFamily(passed: readonly number[]): Record<string, number> {
  const totals: Record<string, number> = {};
  INSTANCES.forEach(({ family }, i) => {
    totals[family.id] = (totals[family.id] ?? 0) + passed[i]! / (INSTANCES.length / 8);
  });
  return totals;
}

const mean = (byFamily: Record<string, number>) =>
  Object.values(byFamily).reduce((sum, score) => sum + score, 0) / REFERENCE_FAMILIES.length;

/**
 * The agent that answers at random: a random count for word-count (the one family whose answer
 * a guess can hit: 1 in 361), another random instance's text for the others.
 */
function randomAgentScores(): Record<string, number> {
  const random = seededRandom(createHash("sha256").update("random agent").digest());
  const passed = INSTANCES.map(({ family, input }) => {
    const guess =
      family.id === "word-count"
        ? `${random.int(40, 400)}\n`
        : instanceInput(family, createHash("sha256").update(random.word(16, 16)).digest(), 1);
    return checkInstance(family, input, Buffer.from(guess));
  });
  return perFamily(passed);
}

describe("the reference agents against the reference families, over four runs' instances", () => {
  it("agents/good solves every instance: 1", async () => {
    const good = await scores("good");
    expect(good).toEqual(Object.fromEntries(REFERENCE_FAMILIES.map((f) => [f.id, 1])));
  }, 120_000);

  it("agents/half solves exactly its four families: 0.5", async () => {
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
    expect(mean(half)).toBe(0.5);
  }, 120_000);

  it("agents/canned (the public answers by input hash or TASK_ID) scores no more than random", async () => {
    const canned = await scores("canned");
    const random = randomAgentScores();
    expect(mean(canned)).toBeLessThanOrEqual(mean(random));
    expect(mean(canned)).toBe(0);
    // On the examples it would have scored 1: what the fixed task set allowed.
    const document = JSON.parse(
      readFileSync(new URL("../../tasks/task-set.json", import.meta.url), "utf8"),
    ) as { tasks: { id: string; examples: { input: string }[] }[] };
    for (const task of document.tasks) {
      const family = REFERENCE_FAMILIES.find((f) => f.id === task.id)!;
      const input = task.examples[1]!.input;
      expect(checkInstance(family, input, await answer("canned", family, input))).toBe(1);
    }
  }, 120_000);

  it("agents/escape solves none: it writes a report of what it tried instead", async () => {
    for (const family of REFERENCE_FAMILIES) {
      const input = instanceInput(family, SEEDS[0]!, 1);
      const output = await answer("escape", family, input);
      expect(checkInstance(family, input, output)).toBe(0);
      const report = JSON.parse(output.toString("utf8")) as { secrets: object; network: object };
      expect(Object.keys(report.secrets)).toContain("EVAL_RUN_TOKEN");
      expect(Object.keys(report.network).length).toBeGreaterThan(0);
    }
  }, 60_000);
});
