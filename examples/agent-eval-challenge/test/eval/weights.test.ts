// get_weights on both backends, rebuilt from the immutable results: empty without a result; a
// rejected result earns nothing and is stored incomplete, whichever check rejected it; a partial
// run (2 of 8 tasks) and an all-zero run earn nothing; winner-take-all with ties to the
// earliest; a newer result that is parked or rejected never takes an accepted one's place;
// best_per_hotkey as an option.
import { createMinerKey, type MinerKey, testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentEvalTest, startAgentEval, withVerifier } from "../agent-eval-kit.js";
import { issuedRun, type PreparedRun, postResult, preparedRun, resultFor } from "./eval-kit.js";

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

/** The stored decision of `run`'s result: what weights are rebuilt from. */
async function storedResult(t: AgentEvalTest, run: PreparedRun) {
  const [row] = await t.sql<{ status: string | null; complete: boolean | null }[]>`
    select verification ->> 'status' as status, complete from eval_results
    where run_id = ${run.runId}`;
  return row;
}

describe.each(await testBackends())("agent-eval weights on %s", (backend) => {
  let t: AgentEvalTest;
  beforeAll(async () => {
    t = await startAgentEval(backend);
  });
  afterAll(() => t?.close());

  it("never counts a rejected result, and stores it incomplete, whichever check rejected it", async () => {
    // Both cores are complete and perfect: only the verification stands between them and a weight.
    const byQuote = await preparedRun(t);
    const overOther = await resultFor(byQuote, { quoteReportData: Buffer.alloc(64, 9) });
    expect(
      ((await (await postResult(t, byQuote, overOther)).json()) as { state: string }).state,
    ).toBe("rejected");
    const byLocalCheck = await preparedRun(t);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const late = await resultFor(byLocalCheck, { completedAt: future });
    expect(
      ((await (await postResult(t, byLocalCheck, late)).json()) as { state: string }).state,
    ).toBe("rejected");
    expect(await storedResult(t, byQuote)).toEqual({ status: "rejected", complete: false });
    expect(await storedResult(t, byLocalCheck)).toEqual({ status: "rejected", complete: false });
    expect((await weightsOf(t)).weights).toEqual({});
  });

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

describe.each(await testBackends())("agent-eval weights after a revalidate on %s", (backend) => {
  let t: AgentEvalTest;
  let owner: MinerKey;
  beforeAll(async () => {
    owner = await createMinerKey();
    t = await startAgentEval(backend, {
      OWNER_HOTKEY: owner.address,
      WEIGHTS_MODE: "best_per_hotkey",
    });
  });
  afterAll(() => t?.close());

  /** The submission's next run: the owner revalidates it, the miner prepares again. */
  async function revalidated(run: PreparedRun): Promise<PreparedRun> {
    const asked = await t.signedFetch(`/owner/submissions/${run.submissionId}/revalidate`, {
      method: "POST",
      miner: owner,
    });
    expect(asked.status).toBe(200);
    const prepared = await t.signedFetch(`/submissions/${run.submissionId}/eval/prepare`, {
      method: "POST",
      miner: run.miner,
    });
    return issuedRun(run, prepared);
  }

  it("keeps an accepted result counting while a newer one is parked or rejected", async () => {
    const full = await scored(t, (run) => everyTask(run, () => [1, 1]));
    const half = await scored(t, (run) => everyTask(run, (i) => (i % 2 === 0 ? [1, 1] : [0, 0])));
    const before = (await weightsOf(t)).weights;
    expect(Object.keys(before).sort()).toEqual([full.miner.address, half.miner.address].sort());

    // full's next run: a perfect, complete result, parked while the verifier is down.
    const parkedRun = await revalidated(full);
    await withVerifier(t, async () => {
      expect((await postResult(t, parkedRun, await resultFor(parkedRun))).status).toBe(503);
    });
    expect(await storedResult(t, parkedRun)).toEqual({ status: null, complete: null });

    // half's next run: a perfect, complete result whose quote binds other report_data.
    const rejectedRun = await revalidated(half);
    const rejected = await resultFor(rejectedRun, { quoteReportData: Buffer.alloc(64, 5) });
    expect((await postResult(t, rejectedRun, rejected)).status).toBe(202);
    expect(await storedResult(t, rejectedRun)).toEqual({ status: "rejected", complete: false });

    // Neither the parked nor the rejected result replaced the accepted one, nor added to it.
    expect((await weightsOf(t)).weights).toEqual(before);
  });
});
