// The run bearer (`runBearer`) and the lock a writing handler takes after it (`lockRun`), on
// both backends. The bearer answers the run for its own token only; and because it runs in its
// own transaction before the handler's, a run cancelled in between is judged again under the
// handler's lock: the attack is a request let in just before the cancel, which must still be 410
// (and release no env), not act on the stale record.
import type { RequestInfo } from "@platform/challenge-sdk";
import { testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentEvalState } from "../../src/agent-eval-state.js";
import { capabilityToken } from "../../src/crypto/index.js";
import { runBearer } from "../../src/eval/run-bearer.js";
import { runEnv } from "../../src/eval/run-reads.js";
import type { Settings } from "../../src/settings.js";
import { type AgentEvalTest, startAgentEval } from "../agent-eval-kit.js";
import { preparedRun } from "./eval-kit.js";

describe.each(await testBackends())("the run bearer on %s", (backend) => {
  let t: AgentEvalTest;
  beforeAll(async () => {
    t = await startAgentEval(backend);
  });
  afterAll(() => t?.close());

  /** What the SDK hands a bearer check for a request to `runId`'s routes. */
  const requestTo = (runId: string) =>
    ({
      sql: t.sql,
      state: t.state,
      pathParams: { eval_run_id: runId },
    }) as unknown as RequestInfo<Settings, AgentEvalState>;

  it("answers the run for its own live token, and nothing for any other token", async () => {
    const run = await preparedRun(t);
    expect(await runBearer(run.runToken, requestTo(run.runId))).toMatchObject({
      id: run.runId,
      submission_id: String(run.submissionId),
      state: "prepared",
      plan_sha256: run.planDigest,
    });
    const other = await preparedRun(t);
    const key = t.state.secretKey;
    for (const token of [
      other.runToken, // another run's
      capabilityToken(Buffer.alloc(32, 1), "evalRun", run.runId).token, // another key's
      capabilityToken(key, "reviewAssignment", run.runId).token, // another scope's, same id
      capabilityToken(key, "evalAttempt", run.runId).token,
      `${run.runToken}A`,
    ]) {
      expect(await runBearer(token, requestTo(run.runId))).toBeNull();
    }
    // A genuine token of a run that does not exist (no stored hash) opens nothing either.
    const unknown = capabilityToken(key, "evalRun", "no-such-run").token;
    expect(await runBearer(unknown, requestTo("no-such-run"))).toBeNull();
  });

  it("judges a run cancelled after its bearer let a request in again, under the handler's lock", async () => {
    const run = await preparedRun(t);
    const before = await runBearer(run.runToken, requestTo(run.runId));
    expect(before).toMatchObject({ id: run.runId, state: "prepared" });

    const cancelled = await t.signedFetch(`/submissions/${run.submissionId}/eval/cancel`, {
      method: "POST",
      miner: run.miner,
      json: { expected_run_id: run.runId },
    });
    expect(cancelled.status, await cancelled.clone().text()).toBe(200);

    // The request that got in before the cancel: its handler locks the run and refuses it.
    await expect(
      runEnv(t.sql, { runId: before!.id, secretKey: t.state.secretKey }),
    ).rejects.toMatchObject({
      status: 410,
      code: "capability_revoked",
      extra: { state: "cancelled" },
    });
    // A request that comes now is refused by the bearer itself, before its body.
    await expect(runBearer(run.runToken, requestTo(run.runId))).rejects.toMatchObject({
      status: 410,
      code: "capability_revoked",
    });
  });
});
