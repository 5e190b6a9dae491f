// Rule 16: the replay-audit list and request routes expose only accepted, fully attested runs
// (the list only the sampler's selection); the result route compares and stores one replay per
// audit id and never changes an accepted score or the weights. And the sampler's determinism.
import { testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sampleRuns, samplerRank } from "../../src/eval/replay-audit.js";
import { type AgentEvalTest, startAgentEval } from "../agent-eval-kit.js";
import { type PreparedRun, postResult, preparedRun, resultFor } from "./eval-kit.js";

describe("the replay-audit sampler", () => {
  const ids = Array.from({ length: 50 }, (_, i) => `run-${i}`);
  it("selects round(rate x N) runs by sha256(seed:run id), whatever the input order", () => {
    const picked = sampleRuns("seed-a", 0.1, ids);
    expect(picked).toHaveLength(5);
    expect(sampleRuns("seed-a", 0.1, [...ids].reverse())).toEqual(picked);
    const ranks = ids.map((id) => samplerRank("seed-a", id)).sort();
    expect(picked.map((id) => samplerRank("seed-a", id))).toEqual(ranks.slice(0, 5));
    expect(sampleRuns("seed-b", 0.1, ids)).not.toEqual(picked);
    expect(sampleRuns("seed-a", 0.02, ids)).toHaveLength(1);
    expect(sampleRuns("seed-a", 0, ids)).toEqual([]);
  });
});

describe.each(await testBackends())("replay audits (rule 16) on %s", (backend) => {
  let t: AgentEvalTest;
  let accepted: PreparedRun;
  let rejected: PreparedRun;
  let pending: PreparedRun;
  /** The weights with the accepted run only, taken before the rejected run posts its result. */
  let acceptedOnly: Record<string, number>;
  beforeAll(async () => {
    t = await startAgentEval(backend, {
      REPLAY_AUDIT_RATE: "1",
      REPLAY_AUDIT_SEED: "test-seed-0001",
    });
    accepted = await preparedRun(t);
    const half = Object.fromEntries(
      accepted.plan.task_set.task_ids.map((id, i) => [id, i < 4 ? [1, 1] : [0, 0]]),
    );
    expect(
      (await postResult(t, accepted, await resultFor(accepted, { trials: half }))).status,
    ).toBe(202);
    acceptedOnly = (await weights()).weights;
    expect(acceptedOnly).toEqual({ [accepted.miner.address]: 1 });
    // A perfect, complete core (it would beat the accepted 0.5) whose quote binds other data.
    rejected = await preparedRun(t);
    const bad = await resultFor(rejected, { quoteReportData: Buffer.alloc(64, 1) });
    expect((await postResult(t, rejected, bad)).status).toBe(202);
    pending = await preparedRun(t);
  });
  afterAll(() => t?.close());

  const get = (path: string) => t.fetch(path, { headers: t.internalHeaders });
  const postReplay = (run: PreparedRun, body: unknown) =>
    t.fetch(`/internal/v1/replay-audits/${run.runId}/result`, {
      method: "POST",
      headers: { ...t.internalHeaders, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const weights = async () =>
    (await (await get("/internal/v1/get_weights")).json()) as { weights: Record<string, number> };

  it("lists and serves only accepted, fully attested runs", async () => {
    const list = (await (await get("/internal/v1/replay-audits/requests")).json()) as {
      population: number;
      requests: { run_id: string; attested_score: number; selected: boolean }[];
    };
    expect(list.population).toBe(1);
    expect(list.requests).toEqual([
      expect.objectContaining({ run_id: accepted.runId, attested_score: 0.5, selected: true }),
    ]);
    expect((await get(`/internal/v1/replay-audits/${accepted.runId}/request`)).status).toBe(200);
    for (const run of [rejected, pending]) {
      const refused = await get(`/internal/v1/replay-audits/${run.runId}/request`);
      expect(refused.status).toBe(404);
      expect(((await refused.json()) as { code: string }).code).toBe("audit_not_available");
    }
    expect((await t.fetch("/internal/v1/replay-audits/requests")).status).toBe(401);
  });

  it("stores one comparison per audit id and never moves the accepted score or the weights", async () => {
    // Taken before the rejected run's result: that result must not have moved them either.
    const before = acceptedOnly;
    expect((await weights()).weights).toEqual(before);
    const ids = accepted.plan.task_set.task_ids;
    const same = {
      audit_id: "audit-1",
      tasks: ids.map((id, i) => ({ task_id: id, trial_scores: i < 4 ? [1, 1] : [0, 0] })),
    };
    const agreed = await postReplay(accepted, same);
    expect(agreed.status).toBe(200);
    expect(await agreed.json()).toMatchObject({
      replay_score: 0.5,
      delta: 0,
      exceeds_tolerance: false,
    });
    // A replay that scores nothing: delta 0.5 > 0.2, flagged.
    const disputed = await postReplay(accepted, {
      audit_id: "audit-2",
      tasks: ids.map((id) => ({ task_id: id, trial_scores: [0, 0] })),
    });
    const dispute = await disputed.json();
    expect(dispute).toMatchObject({
      attested_score: 0.5,
      replay_score: 0,
      delta: 0.5,
      exceeds_tolerance: true,
    });
    // Idempotent by audit id: the same replay again answers the record; another one is 409.
    const again = await postReplay(accepted, {
      audit_id: "audit-2",
      tasks: ids.map((id) => ({ task_id: id, trial_scores: [0, 0] })),
    });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(dispute);
    const conflict = await postReplay(accepted, { ...same, audit_id: "audit-2" });
    expect(conflict.status).toBe(409);
    expect(((await conflict.json()) as { code: string }).code).toBe("audit_conflict");
    // A replay that does not match the plan.
    const invalid = await postReplay(accepted, {
      audit_id: "audit-3",
      tasks: [{ task_id: ids[0], trial_scores: [1] }],
    });
    expect(invalid.status).toBe(400);
    // Nothing else moved.
    const [run] = await t.sql<{ state: string; score: number }[]>`
      select state, score from eval_runs where id = ${accepted.runId}`;
    expect(run).toEqual({ state: "accepted", score: 0.5 });
    expect((await weights()).weights).toEqual(before);
    expect((await postReplay(rejected, same)).status).toBe(404);
  });
});
