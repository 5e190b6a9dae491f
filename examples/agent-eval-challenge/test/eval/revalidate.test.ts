// Rule 23 on both backends: the owner's revalidate forces a new evaluation job of the same
// immutable artifact: only OWNER_HOTKEY may ask; the miner's next eval/prepare issues the new run
// and its token; the earlier accepted result keeps counting for weights until the new one is in.
import { createMinerKey, type MinerKey, testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentEvalTest, startAgentEval } from "../agent-eval-kit.js";
import { readyForReport } from "../review/report-kit.js";
import { type PreparedRun, postResult, preparedRun, resultFor } from "./eval-kit.js";

describe.each(await testBackends())("owner revalidate (rule 23) on %s", (backend) => {
  let t: AgentEvalTest;
  let owner: MinerKey;
  beforeAll(async () => {
    owner = await createMinerKey();
    t = await startAgentEval(backend, { OWNER_HOTKEY: owner.address });
  });
  afterAll(() => t?.close());

  const revalidate = (id: number, by: MinerKey) =>
    t.signedFetch(`/owner/submissions/${id}/revalidate`, { method: "POST", miner: by });
  const code = async (response: Response) => ((await response.json()) as { code: string }).code;
  const weights = async () =>
    (
      (await (
        await t.fetch("/internal/v1/get_weights", { headers: t.internalHeaders })
      ).json()) as {
        weights: Record<string, number>;
      }
    ).weights;
  const scoreAll = (run: PreparedRun, trial: number) =>
    Object.fromEntries(run.plan.task_set.task_ids.map((id) => [id, [trial, trial]]));

  it("issues a new run on the miner's next prepare; the earlier result counts meanwhile", async () => {
    const run = await preparedRun(t);
    // A run in progress cannot be revalidated.
    expect(await code(await revalidate(run.submissionId, owner))).toBe("run_in_progress");
    expect(
      (await postResult(t, run, await resultFor(run, { trials: scoreAll(run, 1) }))).status,
    ).toBe(202);
    expect(await weights()).toEqual({ [run.miner.address]: 1 });

    // Only the owner.
    const refused = await revalidate(run.submissionId, run.miner);
    expect(refused.status).toBe(403);
    expect(await code(refused)).toBe("not_owner");
    const asked = await revalidate(run.submissionId, owner);
    expect(asked.status).toBe(200);
    const pending = (await asked.json()) as { revalidation_id: string; previous_run_id: string };
    expect(pending.previous_run_id).toBe(run.runId);
    // A repeat answers the same pending request.
    expect(
      ((await (await revalidate(run.submissionId, owner)).json()) as { revalidation_id: string })
        .revalidation_id,
    ).toBe(pending.revalidation_id);

    const next = await t.signedFetch(`/submissions/${run.submissionId}/eval/prepare`, {
      method: "POST",
      miner: run.miner,
    });
    const issued = (await next.json()) as {
      run_id: string;
      plan: { run_number: number; agent_sha256: string };
      secret_delivery?: { token: string };
    };
    expect(issued.run_id).not.toBe(run.runId);
    expect(issued.plan.run_number).toBe(2);
    expect(issued.plan.agent_sha256).toBe(run.plan.agent_sha256);
    expect(issued.secret_delivery?.token).toBeDefined();
    const [submission] = await t.sql<{ state: string }[]>`
      select state from submissions where id = ${run.submissionId}`;
    expect(submission!.state).toBe("eval_running");
    // The accepted result of run 1 still counts while run 2 is in progress.
    expect(await weights()).toEqual({ [run.miner.address]: 1 });
    // The pending request was spent: the next prepare answers run 2 without a token.
    const again = (await (
      await t.signedFetch(`/submissions/${run.submissionId}/eval/prepare`, {
        method: "POST",
        miner: run.miner,
      })
    ).json()) as { run_id: string; secret_delivery?: unknown };
    expect(again).toMatchObject({ run_id: issued.run_id });
    expect(again.secret_delivery).toBeUndefined();

    const second: PreparedRun = {
      ...run,
      runId: issued.run_id,
      runToken: issued.secret_delivery!.token,
      plan: (issued as unknown as { plan: PreparedRun["plan"] }).plan,
      planDigest: (issued as unknown as { plan_digest: string }).plan_digest,
    };
    const scored = await postResult(
      t,
      second,
      await resultFor(second, { trials: scoreAll(second, 0) }),
    );
    expect(scored.status).toBe(202);
    // The new result is accepted (score 0, no passed task): the latest verified result of the
    // submission no longer qualifies, so the hotkey holds no weight.
    expect(await weights()).toEqual({});
  });

  it("refuses an unknown submission (404), one without a run and one with a run in progress (409)", async () => {
    expect((await revalidate(999_999, owner)).status).toBe(404);
    const unevaluated = await readyForReport(t);
    expect(await code(await revalidate(unevaluated.submissionId, owner))).toBe(
      "nothing_to_revalidate",
    );
    const running = await preparedRun(t);
    expect(await code(await revalidate(running.submissionId, owner))).toBe("run_in_progress");
  });
});
