/**
 * A validator's replay of one accepted run (docs: "Replay audits"): the replay-audit request's
 * plan and instance seed, the agent's ZIP and the operator's family files give back the run's
 * exact instances (the same seed, family and trial draw the same input), each trial run again in
 * its container and judged by the same checker. What it returns is the body of POST
 * /internal/v1/replay-audits/{run}/result, less the audit id, and each trial's input sha256 (what
 * the evaluator printed), so a replay shows it saw the run's inputs.
 */
import type { TaskRunner } from "@platform/challenge-sdk/tasks";
import type { EvalPlan } from "../eval/eval-plan.js";
import type { OperatorFamilySource } from "../eval/families/index.js";
import { agentTaskFiles } from "./agent-files.js";
import { runInstanceTrial } from "./instance-trial.js";
import { instancesOf } from "./run-instances.js";

export interface ReplayedRun {
  tasks: { task_id: string; trial_scores: number[] }[];
  /** `<family>/<trial>` -> the input's sha256. */
  inputs: Record<string, string>;
}

export async function replayRun(input: {
  request: { plan: EvalPlan; instance_seed: string };
  agentZip: Buffer;
  operatorFamilies?: readonly OperatorFamilySource[];
  runner: TaskRunner;
  image: string;
  timeoutSeconds: number;
  /** The miner's env values, when the validator has them (default none). */
  minerEnv?: Record<string, string>;
}): Promise<ReplayedRun> {
  const { plan } = input.request;
  const { seed, families } = await instancesOf(plan, {
    seed: input.request.instance_seed,
    operator_families: [...(input.operatorFamilies ?? [])],
  });
  const agent = await agentTaskFiles(input.agentZip);
  const replayed: ReplayedRun = { tasks: [], inputs: {} };
  for (const family of families) {
    const trialScores: number[] = [];
    for (let trial = 1; trial <= plan.trials; trial += 1) {
      if (!agent.ok) {
        trialScores.push(0);
        continue;
      }
      const run = await runInstanceTrial({
        runner: input.runner,
        image: input.image,
        jobId: `replay-${plan.run_id}-${family.id}-${trial}`.slice(0, 128),
        family,
        seed,
        trial,
        agentFiles: agent.files,
        minerEnv: input.minerEnv ?? {},
        timeoutSeconds: input.timeoutSeconds,
      });
      trialScores.push(run.score);
      replayed.inputs[`${family.id}/${trial}`] = run.inputSha256;
    }
    replayed.tasks.push({ task_id: family.id, trial_scores: trialScores });
  }
  return replayed;
}
