// Rule 22 on both backends: GET /v1/execution-pool/live lists the in-flight eval units (tasks of
// running runs with an event, whose latest task.status is not finished or failed) keyed by
// submission id, each with its latest event, score-shaped keys stripped; an empty pool is {}.
import { testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentEvalTest, startAgentEval } from "../agent-eval-kit.js";
import { postProgress, postResult, resultFor } from "../eval/eval-kit.js";
import { ndjson, openAttemptOf, postEvents, runningRun } from "./live-kit.js";

interface Unit {
  run_id: string;
  task_id: string;
  latest_event: Record<string, unknown>;
}

describe.each(await testBackends())("the live execution pool (rule 22) on %s", (backend) => {
  let t: AgentEvalTest;
  beforeAll(async () => {
    t = await startAgentEval(backend);
  });
  afterAll(() => t?.close());

  const pool = async () => {
    const response = await t.fetch("/v1/execution-pool/live");
    expect(response.status).toBe(200);
    return (await response.json()) as Record<string, Unit[]>;
  };

  it("is {} when empty, then lists units with their latest event, scores stripped", async () => {
    expect(await pool()).toEqual({});
    const run = await runningRun(t);
    // Running, but no event yet: nothing in flight to show.
    expect(await pool()).toEqual({});
    const [taskA, taskB, taskC] = run.plan.task_set.task_ids as [string, string, string];
    const status = (task: string, seq: number, value: string) =>
      postProgress(t, run, run.session, { type: "task.status", task_id: task, seq, status: value });
    expect((await status(taskA, 1, "running")).status).toBe(200);
    const attempt = await openAttemptOf(t, run, { taskId: taskA });
    expect(
      (await postEvents(t, attempt, ndjson([{ message: "first" }, { message: "step 2 of 5" }])))
        .status,
    ).toBe(202);
    // taskB finished, taskC failed: no longer in flight.
    expect((await status(taskB, 1, "running")).status).toBe(200);
    expect((await status(taskB, 2, "finished")).status).toBe(200);
    expect((await status(taskC, 1, "failed")).status).toBe(200);

    const listed = await pool();
    expect(Object.keys(listed)).toEqual([String(run.submissionId)]);
    expect(listed[String(run.submissionId)]).toEqual([
      {
        run_id: run.runId,
        task_id: taskA,
        latest_event: {
          kind: "task.log",
          at: expect.any(String),
          trial: 1,
          stream: "stdout",
          message: "step 2 of 5",
        },
      },
    ]);

    // A payload with score- and weight-shaped keys (no route writes one; the pool strips them
    // whatever the writer did), as taskA's latest event.
    await t.sql`
      insert into eval_task_events (submission_id, run_id, task_id, kind, seq, payload, bytes)
      values (${run.submissionId}, ${run.runId}, ${taskA}, 'task.progress', 2,
        ${t.sql.json({
          type: "task.progress",
          completed_trials: 1,
          total_trials: 2,
          score: 1,
          details: { weights: [1], trial_scores: [1, 0], note: "half", reward: 3 },
          message: "Authorization: Bearer leaked-token-123",
        } as never)}, 10)`;
    const [unit] = (await pool())[String(run.submissionId)]!;
    expect(unit!.latest_event).toEqual({
      kind: "task.progress",
      at: expect.any(String),
      type: "task.progress",
      completed_trials: 1,
      total_trials: 2,
      details: { note: "half" },
      message: "Authorization: [REDACTED]",
    });
    const text = JSON.stringify(await pool());
    for (const key of ["score", "weight", "reward", "trial_scores"])
      expect(text).not.toContain(key);

    // Once the run has its result it is no longer in flight.
    expect((await postResult(t, run, await resultFor(run))).status).toBe(202);
    expect(await pool()).toEqual({});
  });

  it("keys several submissions' units by submission id", async () => {
    const one = await runningRun(t);
    const two = await runningRun(t);
    for (const run of [one, two]) {
      const attempt = await openAttemptOf(t, run, { taskId: run.plan.task_set.task_ids[1] });
      expect((await postEvents(t, attempt, ndjson([{ message: `hi ${run.runId}` }]))).status).toBe(
        202,
      );
    }
    const listed = await pool();
    for (const run of [one, two]) {
      expect(listed[String(run.submissionId)]).toEqual([
        expect.objectContaining({
          run_id: run.runId,
          task_id: run.plan.task_set.task_ids[1],
          latest_event: expect.objectContaining({ kind: "task.log", message: `hi ${run.runId}` }),
        }),
      ]);
    }
  });
});
