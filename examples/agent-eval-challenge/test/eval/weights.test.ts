// get_weights on both backends, rebuilt from the immutable results: empty without a result; a
// partial run (2 of 8 tasks) and an all-zero run earn nothing; winner-take-all with ties to the
// earliest; best_per_hotkey as an option.
import { testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentEvalTest, startAgentEval } from "../agent-eval-kit.js";
import { type PreparedRun, postResult, preparedRun, resultFor } from "./eval-kit.js";

async function weightsOf(
  t: AgentEvalTest,
): Promise<{ challenge_slug: string; weights: Record<string, number> }> {
  const response = await t.fetch("/internal/v1/get_weights", { headers: t.internalHeaders });
  expect(response.status).toBe(200);
  return (await response.json()) as { challenge_slug: string; weights: Record<string, number> };
}

async function scored(t: AgentEvalTest, trials: (run: PreparedRun) => Record<string, number[]>) {
  const run = await preparedRun(t);
  const response = await postResult(t, run, await resultFor(run, { trials: trials(run) }));
  expect(response.status).toBe(202);
  expect(((await response.json()) as { state: string }).state).toBe("accepted");
  return run;
}

const everyTask = (run: PreparedRun, score: (index: number) => number[]) =>
  Object.fromEntries(run.plan.task_set.task_ids.map((id, index) => [id, score(index)]));

describe.each(await testBackends())("agent-eval weights on %s", (backend) => {
  let t: AgentEvalTest;
  beforeAll(async () => {
    t = await startAgentEval(backend);
  });
  afterAll(() => t?.close());

  it("counts only complete results with a passed task, winner-take-all, ties to the earliest", async () => {
    expect(await weightsOf(t)).toMatchObject({ challenge_slug: "agent-eval", weights: {} });
    // A perfect score on 2 of the 8 tasks: accepted, but it covers only part of the plan.
    await scored(t, (run) => ({
      [run.plan.task_set.task_ids[0]!]: [1, 1],
      [run.plan.task_set.task_ids[1]!]: [1, 1],
    }));
    // Every task attempted, none passed.
    await scored(t, (run) => everyTask(run, () => [0, 0]));
    expect((await weightsOf(t)).weights).toEqual({});

    const good = await scored(t, (run) => everyTask(run, (i) => (i < 6 ? [1, 1] : [0, 0])));
    expect((await weightsOf(t)).weights).toEqual({ [good.miner.address]: 1 });
    const best = await scored(t, (run) => everyTask(run, () => [1, 1]));
    expect((await weightsOf(t)).weights).toEqual({ [best.miner.address]: 1 });
    // The same score later does not take it away (ties: the earliest accepted).
    await scored(t, (run) => everyTask(run, () => [1, 1]));
    expect((await weightsOf(t)).weights).toEqual({ [best.miner.address]: 1 });
  });
});

describe("agent-eval weights, best_per_hotkey", () => {
  let t: AgentEvalTest;
  beforeAll(async () => {
    t = await startAgentEval("pglite", { WEIGHTS_MODE: "best_per_hotkey" });
  });
  afterAll(() => t?.close());

  it("gives each hotkey its best score, normalised", async () => {
    const half = await scored(t, (run) => everyTask(run, (i) => (i % 2 === 0 ? [1, 1] : [0, 0])));
    const full = await scored(t, (run) => everyTask(run, () => [1, 1]));
    const { weights } = await weightsOf(t);
    expect(Object.keys(weights).sort()).toEqual([half.miner.address, full.miner.address].sort());
    expect(weights[full.miner.address]! / weights[half.miner.address]!).toBeCloseTo(2, 6);
  });
});
