/**
 * One trial of one instance: the family's instance for this trial drawn from the run's seed, run
 * in its container (run-trial.ts), and judged here, outside it, by the family's checker on the
 * output copied out. The evaluator and a replay audit run trials through this one function, so a
 * replay draws and checks exactly what the run did.
 */
import type { TaskFile, TaskRunner } from "@platform/challenge-sdk/tasks";
import { sha256Hex } from "../crypto/index.js";
import { checkInstance, instanceInput, type TaskFamily } from "../eval/families/index.js";
import { runTrial, type TrialRun } from "./run-trial.js";

export interface InstanceTrial {
  run: TrialRun;
  score: 0 | 1;
  /** sha256 of the instance's input: what a replay compares, never the input itself. */
  inputSha256: string;
}

export async function runInstanceTrial(input: {
  runner: TaskRunner;
  image: string;
  jobId: string;
  family: TaskFamily;
  seed: Buffer;
  trial: number;
  agentFiles: readonly TaskFile[];
  minerEnv: Record<string, string>;
  timeoutSeconds: number;
}): Promise<InstanceTrial> {
  const text = instanceInput(input.family, input.seed, input.trial);
  const run = await runTrial({
    runner: input.runner,
    image: input.image,
    jobId: input.jobId,
    task: { id: input.family.id, instructions: input.family.instructions, input: text },
    agentFiles: input.agentFiles,
    minerEnv: input.minerEnv,
    timeoutSeconds: input.timeoutSeconds,
  });
  const score = run.output === null ? 0 : checkInstance(input.family, text, run.output);
  return { run, score, inputSha256: sha256Hex(text) };
}
