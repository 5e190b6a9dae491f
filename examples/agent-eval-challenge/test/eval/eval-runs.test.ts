// eval/retry, eval/cancel and eval/failure on both backends: compare-and-swap on the current
// run, retry only after cancelled/expired/error and with its token once, at most 3 runs per
// allowing review, one new run under concurrent retries, failure's closed reason codes.
import { testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentEvalTest, startAgentEval } from "../agent-eval-kit.js";
import {
  envelopeFor,
  postReport,
  type ReadyAssignment,
  readyForReport,
} from "../review/report-kit.js";

interface Run {
  run_id: string;
  state: string;
  plan: { run_number: number };
  secret_delivery?: { token: string };
}

describe.each(await testBackends())("eval retry, cancel, failure on %s", (backend) => {
  let t: AgentEvalTest;
  beforeAll(async () => {
    t = await startAgentEval(backend);
  });
  afterAll(() => t?.close());

  async function launchedAndAllowed(): Promise<ReadyAssignment> {
    const ready = await readyForReport(t);
    expect((await postReport(t, ready, await envelopeFor(ready))).status).toBe(202);
    const base = `/submissions/${ready.submissionId}`;
    await t.signedFetch(`${base}/env/confirm-empty`, { method: "POST", miner: ready.miner });
    expect(
      (await t.signedFetch(`${base}/launch`, { method: "POST", miner: ready.miner })).status,
    ).toBe(200);
    return ready;
  }
  const post = (ready: ReadyAssignment, path: string, json?: unknown) =>
    t.signedFetch(`/submissions/${ready.submissionId}/eval/${path}`, {
      method: "POST",
      miner: ready.miner,
      ...(json === undefined ? {} : { json }),
    });
  const ok = async <T>(response: Response): Promise<T> => {
    const text = await response.text();
    expect(response.status, text).toBe(200);
    return JSON.parse(text) as T;
  };
  const refusal = async (response: Response) => [
    response.status,
    ((await response.json()) as { code: string }).code,
  ];

  it("cancels, fails and retries the current run, each retry a new run with its token once", async () => {
    const ready = await launchedAndAllowed();
    const first = await ok<Run>(await post(ready, "prepare"));
    // Retry needs a terminal run.
    expect(await refusal(await post(ready, "retry", { expected_run_id: first.run_id }))).toEqual([
      409,
      "run_not_retryable",
    ]);
    const cancelled = await ok<{ state: string }>(
      await post(ready, "cancel", { expected_run_id: first.run_id }),
    );
    expect(cancelled).toEqual({ run_id: first.run_id, state: "cancelled", failure: null });
    const second = await ok<Run>(await post(ready, "retry", { expected_run_id: first.run_id }));
    expect(second.plan.run_number).toBe(2);
    expect(second.secret_delivery?.token).toBeDefined();
    expect(second.secret_delivery?.token).not.toBe(first.secret_delivery?.token);
    // The old run is no longer current: naming it is stale.
    expect(await refusal(await post(ready, "cancel", { expected_run_id: first.run_id }))).toEqual([
      409,
      "stale_run",
    ]);
    // prepare answers the new current run, without its token.
    const current = await ok<Run>(await post(ready, "prepare"));
    expect(current.run_id).toBe(second.run_id);
    expect(current.secret_delivery).toBeUndefined();

    const failed = await ok(
      await post(ready, "failure", {
        expected_run_id: second.run_id,
        reason_code: "tunnel_failed",
        message: "the tunnel closed",
      }),
    );
    expect(failed).toEqual({
      run_id: second.run_id,
      state: "error",
      failure: { reason_code: "tunnel_failed", message: "the tunnel closed" },
    });
    const third = await ok<Run>(await post(ready, "retry", { expected_run_id: second.run_id }));
    expect(third.plan.run_number).toBe(3);
    const [row] = await t.sql<{ predecessor_id: string; review_run_number: number }[]>`
      select predecessor_id, review_run_number from eval_runs where id = ${third.run_id}`;
    expect(row).toEqual({ predecessor_id: second.run_id, review_run_number: 3 });
    // A fourth run under the same allowing review is refused.
    expect((await post(ready, "cancel", { expected_run_id: third.run_id })).status).toBe(200);
    expect(await refusal(await post(ready, "retry", { expected_run_id: third.run_id }))).toEqual([
      409,
      "review_run_limit_reached",
    ]);
  });

  it("issues one run under 6 concurrent retries", async () => {
    const ready = await launchedAndAllowed();
    const first = await ok<Run>(await post(ready, "prepare"));
    await ok(await post(ready, "cancel", { expected_run_id: first.run_id }));
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => post(ready, "retry", { expected_run_id: first.run_id })),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409]);
    const [{ n }] = (await t.sql`
      select count(*)::int as n from eval_runs where submission_id = ${ready.submissionId}`) as unknown as [
      { n: number },
    ];
    expect(n).toBe(2);
  });

  it("refuses an unknown reason code (422), another submission's run (404), a stranger (403)", async () => {
    const ready = await launchedAndAllowed();
    const first = await ok<Run>(await post(ready, "prepare"));
    const bad = await post(ready, "failure", {
      expected_run_id: first.run_id,
      reason_code: "agent_crashed",
      message: "x",
    });
    expect(bad.status).toBe(422);
    const other = await launchedAndAllowed();
    expect(await refusal(await post(other, "cancel", { expected_run_id: first.run_id }))).toEqual([
      404,
      "run_not_found",
    ]);
    const stranger = { ...ready, miner: other.miner };
    expect(
      await refusal(await post(stranger, "cancel", { expected_run_id: first.run_id })),
    ).toEqual([403, "not_submission_owner"]);
    const [run] = await t.sql<
      { state: string }[]
    >`select state from eval_runs where id = ${first.run_id}`;
    expect(run!.state).toBe("prepared");
  });
});
