// An operator's own task families (TASK_FAMILIES_DIR): <id>.mjs modules read at start, hashed
// into the family set's revision (so the plan, the measured evaluator and a replay name exactly
// which ran), released sealed with the seed to the evaluator, which loads them from those exact
// bytes and scores them like the rest. A bad directory stops the service; an agent that learned
// the public families (agents/good dispatches on TASK_ID) fails a private one.
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkInstance,
  instanceInput,
  loadFamilySet,
  readOperatorFamilies,
} from "../../src/eval/families/index.js";
import { loadEvalWorkerSettings } from "../../src/eval-worker/eval-worker-settings.js";
import { runEval } from "../../src/eval-worker/run-eval.js";
import { type AgentEvalTest, startAgentEval } from "../agent-eval-kit.js";
import { grantFor, preparedRun } from "../eval/eval-kit.js";
import { AGENTS_DIR } from "./eval-worker-kit.js";

/** A private family: reverse the words of each line (not one of the public eight). */
const REVERSE_WORDS = `export default {
  title: "Reverse the words",
  instructions: "Write each line of the input with its words in reverse order.",
  bounds: "4-8 lines of 3-6 words",
  generate(random) {
    const lines = [];
    for (let n = random.int(4, 8); n > 0; n -= 1) {
      const words = [];
      for (let w = random.int(3, 6); w > 0; w -= 1) words.push(random.word(3, 8));
      lines.push(words.join(" "));
    }
    return lines.join("\\n") + "\\n";
  },
  check(input, output) {
    const expected = input.trimEnd().split("\\n").map((l) => l.split(" ").reverse().join(" "));
    return output.replace(/\\r\\n/g, "\\n").trimEnd() === expected.join("\\n");
  },
};
`;

const work = mkdtempSync(join(tmpdir(), "operator-families-"));
const familiesDir = join(work, "families");
mkdirSync(familiesDir);
writeFileSync(join(familiesDir, "reverse-words.mjs"), REVERSE_WORDS);
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("an operator's task families", () => {
  it("join the set under their file's name, and their bytes decide the revision", async () => {
    const reference = await loadFamilySet();
    const sources = await readOperatorFamilies(familiesDir);
    const withPrivate = await loadFamilySet(sources);
    expect(withPrivate.families.map((family) => family.id)).toEqual([
      ...reference.families.map((family) => family.id),
      "reverse-words",
    ]);
    expect(withPrivate.revision_id).not.toBe(reference.revision_id);
    const edited = await loadFamilySet([{ ...sources[0]!, source: `${sources[0]!.source} ` }]);
    expect(edited.revision_id).not.toBe(withPrivate.revision_id);
    expect((await loadFamilySet(sources)).revision_id).toBe(withPrivate.revision_id);
  });

  it("refuse a directory that breaks the contract (the service would not start)", async () => {
    const cases: [string, (dir: string) => void, RegExp][] = [
      ["bad name", (d) => writeFileSync(join(d, "Bad_Name.mjs"), REVERSE_WORDS), /not <family id>/],
      [
        "no checker",
        (d) =>
          writeFileSync(
            join(d, "x.mjs"),
            "export default { title: 't', instructions: 'i', bounds: 'b', generate() { return ''; } };",
          ),
        /must be functions/,
      ],
      [
        "a link",
        (d) => symlinkSync(join(familiesDir, "reverse-words.mjs"), join(d, "y.mjs")),
        /not a regular file/,
      ],
      [
        "a public id",
        (d) => writeFileSync(join(d, "uppercase.mjs"), REVERSE_WORDS),
        /defined twice/,
      ],
    ];
    for (const [name, make, error] of cases) {
      const dir = mkdtempSync(join(work, "bad-"));
      make(dir);
      await expect(
        readOperatorFamilies(dir).then((sources) => loadFamilySet(sources)),
        name,
      ).rejects.toThrow(error);
    }
  });

  it("are what agents/good (which learned the public eight) cannot solve", async () => {
    const [family] = (await loadFamilySet(await readOperatorFamilies(familiesDir))).families.slice(
      -1,
    );
    const input = instanceInput(family!, Buffer.alloc(32, 7), 1);
    writeFileSync(join(work, "input"), input);
    const code = await new Promise<number>((resolve) =>
      execFile(
        "python3",
        [join(AGENTS_DIR, "good", "agent.py")],
        {
          env: {
            PATH: process.env.PATH ?? "/usr/bin:/bin",
            TASK_ID: family!.id,
            TASK_INSTRUCTIONS: family!.instructions,
            TASK_INPUT: join(work, "input"),
            TASK_OUTPUT: join(work, "output"),
          },
        },
        (error) => resolve(error === null ? 0 : 1),
      ),
    );
    expect(code).toBe(1);
    const reversed = input
      .trimEnd()
      .split("\n")
      .map((l) => l.split(" ").reverse().join(" "));
    expect(checkInstance(family!, input, Buffer.from(reversed.join("\n")))).toBe(1);
  });
});

const [backend] = await testBackends();

describe(`a run with an operator's family (on ${backend})`, () => {
  let t: AgentEvalTest;
  beforeAll(async () => {
    t = await startAgentEval(backend!, {
      SUBMISSION_WINDOW_SECONDS: "0",
      TASK_FAMILIES_DIR: familiesDir,
    });
  }, 60_000);
  afterAll(() => t?.close());

  it("is planned, released to the evaluator and measured like the rest", async () => {
    // An empty ZIP: nothing runs (no Docker needed), every trial scores 0, the result is posted.
    const run = await preparedRun(t);
    expect(run.plan.task_set.task_ids.at(-1)).toBe("reverse-words");
    expect(run.plan.task_set.revision_id).toBe(t.state.families.revision_id);
    const lines: string[] = [];
    const result = await runEval(
      loadEvalWorkerSettings({
        EVAL_RUN_TOKEN: run.runToken,
        TELEMETRY_GRANT: JSON.stringify(grantFor(run)),
        CHALLENGE_URL: t.url,
      }),
      { log: (line) => lines.push(line) },
    );
    expect(result, lines.join("\n")).toMatchObject({ receipted: true, score: 0 });
    expect(lines.join("\n")).toContain("9 families (1 the operator's)");
    const [stored] = await t.sql<{ result_core: { tasks: { task_id: string }[] } }[]>`
      select result_core from eval_results where run_id = ${run.runId}`;
    expect(stored!.result_core.tasks.map((task) => task.task_id)).toContain("reverse-words");
    // The family's code reached the worker sealed: no public answer carries it.
    const view = await t.fetch(`/evaluation/v1/runs/${run.runId}`, {
      headers: { authorization: `Bearer ${run.runToken}` },
    });
    expect(await view.text()).not.toContain("Reverse the words");
    expect(readFileSync(join(familiesDir, "reverse-words.mjs"), "utf8")).toBe(REVERSE_WORDS);
  });
});
