// What the eval VM reads with its run token, on both backends: the run and its plan, the exact
// agent ZIP (re-hashed by verifiedArtifactBytes, tested in test/review/artifact-integrity), and the miner's env values (the only
// place they are opened, before the result only); another run's token opens none of them.
import { createHash } from "node:crypto";
import { testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentEvalTest, startAgentEval } from "../agent-eval-kit.js";
import { postResult, preparedRun, resultFor } from "./eval-kit.js";

describe.each(await testBackends())("the eval VM's reads on %s", (backend) => {
  let t: AgentEvalTest;
  beforeAll(async () => {
    t = await startAgentEval(backend);
  });
  afterAll(() => t?.close());

  const read = (runId: string, token: string | null, path = "") =>
    t.fetch(`/evaluation/v1/runs/${runId}${path}`, {
      headers: token === null ? {} : { authorization: `Bearer ${token}` },
    });

  it("serves the run, its plan and the exact agent bytes to its token only", async () => {
    const run = await preparedRun(t);
    const other = await preparedRun(t);
    const view = await read(run.runId, run.runToken);
    expect(view.status).toBe(200);
    expect(await view.json()).toEqual({
      run_id: run.runId,
      state: "prepared",
      plan: run.plan,
      plan_sha256: run.planDigest,
    });
    const artifact = await read(run.runId, run.runToken, "/artifact");
    expect(artifact.status).toBe(200);
    expect(artifact.headers.get("content-type")).toBe("application/zip");
    const bytes = Buffer.from(await artifact.arrayBuffer());
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(run.plan.agent_sha256);
    expect(artifact.headers.get("x-artifact-sha256")).toBe(run.plan.agent_sha256);

    for (const path of ["", "/artifact", "/env"]) {
      expect((await read(run.runId, other.runToken, path)).status).toBe(401);
      expect((await read(run.runId, null, path)).status).toBe(401);
    }
  });

  it("releases the miner's env values before the result, never after", async () => {
    const run = await preparedRun(t, {
      env: { OPENAI_API_KEY: "sk-test-value-123", MODE: "fast" },
    });
    const env = await read(run.runId, run.runToken, "/env");
    expect(env.status).toBe(200);
    expect(await env.json()).toEqual({
      run_id: run.runId,
      env: { OPENAI_API_KEY: "sk-test-value-123", MODE: "fast" },
    });
    expect((await postResult(t, run, await resultFor(run))).status).toBe(202);
    const after = await read(run.runId, run.runToken, "/env");
    expect(after.status).toBe(409);
    expect(((await after.json()) as { code: string }).code).toBe("run_not_running");
    // The run itself stays readable: its state is the VM's answer to "was my result taken?".
    expect(((await (await read(run.runId, run.runToken)).json()) as { state: string }).state).toBe(
      "accepted",
    );
  });

  it("a confirmed-empty env is released as {}; a cancelled run's token opens nothing", async () => {
    const run = await preparedRun(t);
    expect(await (await read(run.runId, run.runToken, "/env")).json()).toEqual({
      run_id: run.runId,
      env: {},
    });
    const cancel = await t.signedFetch(`/submissions/${run.submissionId}/eval/cancel`, {
      method: "POST",
      miner: run.miner,
      json: { expected_run_id: run.runId },
    });
    expect(cancel.status).toBe(200);
    for (const path of ["", "/artifact", "/env"]) {
      const response = await read(run.runId, run.runToken, path);
      expect(response.status).toBe(410);
    }
  });
});
