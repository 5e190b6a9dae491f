// Helpers of the eval worker's tests: the reference agents (agents/<name>) as files and as the
// ZIP a miner uploads, instances of the reference families, and a submission of a given agent ZIP taken
// through the real routes to a prepared eval run (review allowed with a development quote, env
// confirmed empty, launched, eval/prepare): eval-kit's preparedRun, with the agent chosen.
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { writeZip } from "@platform/challenge-sdk/testing";
import {
  checkInstance,
  instanceInput,
  REFERENCE_FAMILIES,
  type TaskFamily,
} from "../../src/eval/families/index.js";
import type { TrialTask } from "../../src/eval-worker/run-trial.js";
import type { AgentEvalTest } from "../agent-eval-kit.js";
import { type PreparedRun, preparedRun } from "../eval/eval-kit.js";

export const AGENTS_DIR = fileURLToPath(new URL("../../agents/", import.meta.url));
export const WORKER = fileURLToPath(new URL("../../dist/eval-worker.js", import.meta.url));
export const AGENT_IMAGE = "platform/agent-eval-agent:local";

export type AgentName = "good" | "half" | "escape" | "canned";

/** The reference family `id`. */
export const referenceFamily = (id: string): TaskFamily =>
  REFERENCE_FAMILIES.find((family) => family.id === id)!;

/** One instance of the reference family `id` (a fresh seed unless given) and its checker. */
export function referenceInstance(
  id: string,
  seed: Buffer = randomBytes(32),
  trial = 1,
): { task: TrialTask; check: (output: Buffer) => 0 | 1 } {
  const family = referenceFamily(id);
  const input = instanceInput(family, seed, trial);
  return {
    task: { id, instructions: family.instructions, input },
    check: (output) => checkInstance(family, input, output),
  };
}

/** The files of agents/<name> (or of `files`), as name -> bytes. */
export function agentFiles(name: AgentName): Record<string, Buffer> {
  const directory = `${AGENTS_DIR}${name}`;
  return Object.fromEntries(
    readdirSync(directory).map((file) => [file, readFileSync(`${directory}/${file}`)]),
  );
}

/** The ZIP a miner uploads: the agent's files, unique per call by a comment line in agent.py. */
export function agentArchive(files: Record<string, Buffer | string>): Buffer {
  const unique = `# build ${Math.random().toString(36).slice(2)}\n`;
  return writeZip(
    Object.entries(files).map(([name, data]) => ({
      name,
      data: name === "agent.py" ? Buffer.concat([Buffer.from(unique), Buffer.from(data)]) : data,
    })),
  );
}

/** A fresh miner's submission of `zip`, reviewed (allow), launched and with an issued eval run. */
export function preparedRunOf(t: AgentEvalTest, zip: Buffer): Promise<PreparedRun> {
  return preparedRun(t, { zip });
}
