// The eval worker's result, delivered in process through the SDK's worker client against the
// service on a real socket. The submission is an empty ZIP (no agent.py): every trial scores 0
// without a container, so nothing here needs Docker. A receipt ends the run; a verifier that
// asks for a wait (503 + Retry-After) longer than the worker's budget ends it at once, with the
// run left verifying and nothing credited.
import { testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadEvalWorkerSettings } from "../../src/eval-worker/eval-worker-settings.js";
import { runEval } from "../../src/eval-worker/run-eval.js";
import {
  type AgentEvalTest,
  startAgentEval,
  verifierOutage,
  withVerifier,
} from "../agent-eval-kit.js";
import { grantFor, type PreparedRun, preparedRun } from "../eval/eval-kit.js";

const [backend] = await testBackends();

describe(`the eval worker's result delivery (on ${backend})`, () => {
  let t: AgentEvalTest;
  beforeAll(async () => {
    t = await startAgentEval(backend!, { SUBMISSION_WINDOW_SECONDS: "0" });
  }, 60_000);
  afterAll(() => t?.close());

  const settingsOf = (run: PreparedRun) =>
    loadEvalWorkerSettings({
      EVAL_RUN_TOKEN: run.runToken,
      TELEMETRY_GRANT: JSON.stringify(grantFor(run)),
      CHALLENGE_URL: t.url,
    });
  const runRow = async (run: PreparedRun) => {
    const [row] = await t.sql<{ state: string; score: number | null }[]>`
      select state, score from eval_runs where id = ${run.runId}`;
    return row!;
  };

  it("posts the result once and returns the receipt", async () => {
    const run = await preparedRun(t);
    const lines: string[] = [];
    const result = await runEval(settingsOf(run), { log: (line) => lines.push(line) });
    expect(result, lines.join("\n")).toMatchObject({ receipted: true, score: 0 });
    expect(lines.join("\n")).toContain("eval-worker: result receipted (HTTP 202)");
    expect(lines.join("\n")).not.toMatch(/result attempt/);
    expect(await runRow(run)).toEqual({ state: "accepted", score: 0 });
    // What the worker measured into RTMR3, in order.
    const [stored] = await t.sql<{ body: string }[]>`
      select body from eval_results where run_id = ${run.runId}`;
    const { attestation } = JSON.parse(stored!.body) as {
      attestation: { event_log: { imr: number; event: string }[] };
    };
    expect(attestation.event_log.map(({ imr, event }) => `${imr}:${event}`)).toEqual([
      "3:evaluator-version",
      "3:eval-plan-digest",
      "3:task-set-revision",
      "3:agent-sha256",
      "3:agent-image",
    ]);
  }, 60_000);

  it("gives up at once when the verifier asks for a wait past its budget", async () => {
    const run = await preparedRun(t);
    const lines: string[] = [];
    const started = Date.now();
    // The verifier answers the instance seed's release, then is away for the result.
    const working = t.state.verifier;
    let quotes = 0;
    await withVerifier(
      t,
      async () => {
        const result = await runEval(settingsOf(run), {
          log: (line) => lines.push(line),
          // The service asks for 30 s: more than this budget, so no second attempt.
          resultRetryBudgetMs: 5_000,
        });
        expect(result).toMatchObject({ receipted: false, reason: "result_refused" });
        if (result.receipted) return;
        expect(result.message).toMatch(
          /^POST \/result: no 2xx within 5 s \(last: POST \/result answered 503 verifier_unavailable/,
        );
        expect(result.message).not.toContain(run.runToken);
      },
      (quote, options) => {
        quotes += 1;
        return quotes === 1 ? working.verify(quote, options) : verifierOutage(quote, options);
      },
    );
    // It never waited the 30 s the service asked for, nor retried: one attempt, no wait line.
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(lines.filter((line) => /result attempt \d+:/.test(line))).toEqual([]);
    expect(await runRow(run)).toEqual({ state: "verifying", score: null });
  }, 60_000);
});
