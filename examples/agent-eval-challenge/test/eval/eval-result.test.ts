// Rules 13 and 14 on both backends: the result route receives one exact, canonical, quote-bound
// result scoped to the run token and is the only path to a score: 202 / identical 200 /
// different 409, non-canonical bytes 400, every tampering rejected with its code (no score),
// a verifier outage parks the run without credit, the token's scope and revocation.
import { testBackends } from "@platform/challenge-sdk/testing";
import { Value } from "@sinclair/typebox/value";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { measuredEvent } from "../../src/attestation/index.js";
import { canonicalDigest, type JsonValue } from "../../src/crypto/index.js";
import type { EvalResult } from "../../src/eval/eval-result.js";
import { EvalReceiptResponse } from "../../src/eval/eval-result-schemas.js";
import { type AgentEvalTest, startAgentEval, withVerifier } from "../agent-eval-kit.js";
import { sha384Hex } from "../review/report-kit.js";
import { type PreparedRun, postResult, preparedRun, resultFor } from "./eval-kit.js";

interface Receipt {
  run_id: string;
  state: string;
  score: number | null;
  verification: {
    status: string;
    code: string | null;
    measurement: string | null;
    fully_attested: boolean;
  };
}

describe.each(await testBackends())("eval result (rules 13, 14) on %s", (backend) => {
  let t: AgentEvalTest;
  beforeAll(async () => {
    t = await startAgentEval(backend);
  });
  afterAll(() => t?.close());

  const runRow = async (run: PreparedRun) => {
    const [row] = await t.sql<{ state: string; score: number | null }[]>`
      select state, score from eval_runs where id = ${run.runId}`;
    return row!;
  };

  it("rule 13: accepts one exact result (202), replays it (200), refuses another (409)", async () => {
    const run = await preparedRun(t);
    // Before the result, nothing has a score: the result route is the only path (rule 14).
    expect(await runRow(run)).toEqual({ state: "prepared", score: null });
    const half = Object.fromEntries(
      run.plan.task_set.task_ids.map((id, index) => [id, index % 2 === 0 ? [1, 1] : [1, 0]]),
    );
    const result = await resultFor(run, { trials: half });
    const first = await postResult(t, run, result);
    const text = await first.text();
    expect(first.status, text).toBe(202);
    const receipt = JSON.parse(text) as Receipt;
    expect(receipt).toMatchObject({
      run_id: run.runId,
      state: "accepted",
      score: 0.75,
      verification: { status: "verified", code: null, fully_attested: true },
    });
    // The receipt is what /openapi.json says it is (a closed record: no field it does not list).
    expect([...Value.Errors(EvalReceiptResponse, receipt)].map((e) => e.message)).toEqual([]);
    expect(receipt.verification.measurement).toMatch(/^[0-9a-f]{96}$/);
    expect(await runRow(run)).toEqual({ state: "accepted", score: 0.75 });
    const replay = await postResult(t, run, result);
    expect(replay.status).toBe(200);
    expect(await replay.json()).toEqual(receipt);
    const other = await postResult(t, run, await resultFor(run));
    expect(other.status).toBe(409);
    expect(((await other.json()) as { code: string }).code).toBe("result_conflict");
    const [submission] = await t.sql<{ state: string }[]>`
      select state from submissions where id = ${run.submissionId}`;
    expect(submission!.state).toBe("completed");
  });

  it("refuses bytes that are not canonical JSON (400), nothing stored", async () => {
    const run = await preparedRun(t);
    const result = await resultFor(run);
    const spaced = JSON.stringify(result, null, 1);
    const refused = await postResult(t, run, null, { raw: spaced });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { code: string }).code).toBe("not_canonical_json");
    expect(await runRow(run)).toEqual({ state: "prepared", score: null });
    expect((await postResult(t, run, result)).status).toBe(202);
  });

  it("scopes the result to its run token: none, another run's, a revoked run's", async () => {
    const run = await preparedRun(t);
    const other = await preparedRun(t);
    const result = await resultFor(run);
    expect((await postResult(t, run, result, { token: null })).status).toBe(401);
    expect((await postResult(t, run, result, { token: other.runToken })).status).toBe(401);
    const cancel = await t.signedFetch(`/submissions/${run.submissionId}/eval/cancel`, {
      method: "POST",
      miner: run.miner,
      json: { expected_run_id: run.runId },
    });
    expect(cancel.status).toBe(200);
    const revoked = await postResult(t, run, result);
    expect(revoked.status).toBe(410);
    expect(((await revoked.json()) as { code: string }).code).toBe("capability_revoked");
  });

  const tampering: [string, string, (run: PreparedRun) => Promise<EvalResult>][] = [
    [
      "the digest not the core's",
      "result_digest_mismatch",
      async (run) => {
        const result = await resultFor(run);
        result.result_core.evaluator.version = "2";
        return result;
      },
    ],
    [
      "another plan digest",
      "plan_binding_mismatch",
      async (run) => resultFor({ ...run, planDigest: "0".repeat(64) }),
    ],
    [
      "a task the plan does not have",
      "unknown_task",
      (run) => resultFor(run, { trials: { "not-a-task": [1, 1] } }),
    ],
    [
      "three trials where the plan has two",
      "trial_count_mismatch",
      (run) => resultFor(run, { trials: { [run.plan.task_set.task_ids[0]!]: [1, 1, 1] } }),
    ],
    [
      "a task score that is not the mean of its trials",
      "score_mismatch",
      async (run) => {
        const result = await resultFor(run);
        result.result_core.tasks[0]!.trial_scores = [0, 0];
        result.result_digest = canonicalDigest(result.result_core as unknown as JsonValue);
        return result;
      },
    ],
    [
      "report_data_hex flipped (the quote still over this run's binding)",
      "report_data_binding_mismatch",
      async (run) => {
        const result = await resultFor(run);
        const last = result.report_data_hex.at(-1) === "0" ? "1" : "0";
        result.report_data_hex = result.report_data_hex.slice(0, -1) + last;
        return result;
      },
    ],
    [
      // report_data_hex and the quote agree, on another run's nonce: the service computes the
      // binding from its own digest, run and nonce, never from what the result claims.
      "report_data_hex and its quote binding another run's nonce",
      "report_data_binding_mismatch",
      async (run) => resultFor(run, { bindNonce: (await preparedRun(t)).plan.nonce }),
    ],
    [
      "a quote over other report_data",
      "report_data_mismatch",
      (run) => resultFor(run, { quoteReportData: Buffer.alloc(64, 3) }),
    ],
    [
      "a measurement outside the allow-list",
      "measurement_not_allowed",
      (run) => resultFor(run, { quoteMeasurement: sha384Hex("another VM") }),
    ],
    [
      "a claimed measurement other than the quote's",
      "measurement_mismatch",
      (run) => resultFor(run, { claimedMeasurement: sha384Hex("claimed") }),
    ],
    [
      "a result completed in the future",
      "time_order_invalid",
      (run) => resultFor(run, { completedAt: new Date(Date.now() + 3_600_000).toISOString() }),
    ],
    [
      "an event log that does not replay to the quote",
      "event_log_mismatch",
      (run) =>
        resultFor(run, {
          eventLog: [measuredEvent(3, "evaluator", "claimed")],
          quoteRtmrs: ["00".repeat(48), "00".repeat(48), "00".repeat(48), "11".repeat(48)],
        }),
    ],
  ];

  it.each(tampering)("rejects %s with %s, and no score", async (_what, code, tamper) => {
    const run = await preparedRun(t);
    const response = await postResult(t, run, await tamper(run));
    const text = await response.text();
    expect(response.status, text).toBe(202);
    const receipt = JSON.parse(text) as Receipt;
    expect(receipt).toMatchObject({
      state: "rejected",
      score: null,
      verification: { status: "rejected", code, measurement: null },
    });
    expect([...Value.Errors(EvalReceiptResponse, receipt)].map((e) => e.message)).toEqual([]);
    expect(await runRow(run)).toEqual({ state: "rejected", score: null });
  });

  it("parks the run while the verifier is unavailable, without credit, then accepts the same bytes", async () => {
    const run = await preparedRun(t);
    const result = await resultFor(run);
    await withVerifier(t, async () => {
      const parked = await postResult(t, run, result);
      expect(parked.status).toBe(503);
      expect(await runRow(run)).toEqual({ state: "verifying", score: null });
    });
    const later = await postResult(t, run, result);
    expect(later.status).toBe(200);
    expect(await runRow(run)).toEqual({ state: "accepted", score: 1 });
  });
});
