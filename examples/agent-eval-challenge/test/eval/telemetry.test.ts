// Rules 14 and 15 on both backends: a telemetry session needs the run token and a grant the
// submission's hotkey signed for this run (nonce single use, ±300 s, stored in the database);
// progress needs the session, keeps each task's sequence increasing, records an identical
// repeat once, refuses score-shaped fields, and never moves a score.
import { createMinerKey, testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signTelemetryGrant } from "../../src/eval/telemetry-grant.js";
import { type AgentEvalTest, startAgentEval } from "../agent-eval-kit.js";
import {
  grantFor,
  issuedRun,
  openTelemetry,
  type PreparedRun,
  postProgress,
  postResult,
  postTelemetrySession,
  preparedRun,
  resultFor,
} from "./eval-kit.js";

const codeOf = async (response: Response) => ((await response.json()) as { code: string }).code;

describe.each(await testBackends())("telemetry and progress (rules 14, 15) on %s", (backend) => {
  let t: AgentEvalTest;
  let run: PreparedRun;
  let other: PreparedRun;
  beforeAll(async () => {
    t = await startAgentEval(backend);
    [run, other] = [await preparedRun(t), await preparedRun(t)];
  });
  afterAll(() => t?.close());

  const runState = async (id: string) => {
    const [row] = await t.sql<{ state: string; score: number | null }[]>`
      select state, score from eval_runs where id = ${id}`;
    return row!;
  };

  it("opens a session with the miner's grant, stores it hashed, and starts the run", async () => {
    expect((await runState(run.runId)).state).toBe("prepared");
    const response = await postTelemetrySession(t, run, grantFor(run));
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      session_id: string;
      expires_at: string;
      state: string;
    };
    expect(body.state).toBe("running");
    expect(body.session_id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const lifetime = new Date(body.expires_at).getTime() - Date.now();
    expect(lifetime).toBeGreaterThan(55 * 60_000);
    expect(lifetime).toBeLessThanOrEqual(60 * 60_000);
    expect((await runState(run.runId)).state).toBe("running");
    // In the database, not in memory, and never the id itself.
    const rows = await t.sql<{ id_mac: string; hotkey: string }[]>`
      select id_mac, hotkey from eval_telemetry_sessions where run_id = ${run.runId}`;
    expect(rows).toHaveLength(1);
    expect(rows[0]!.hotkey).toBe(run.miner.hotkey);
    expect(rows[0]!.id_mac).not.toContain(body.session_id);
    // A second grant opens a second session (a restarted worker); the run stays running.
    expect((await postTelemetrySession(t, run, grantFor(run))).status).toBe(200);
  });

  it("refuses a reused nonce, even on another run of the same hotkey", async () => {
    const grant = grantFor(run);
    expect((await postTelemetrySession(t, run, grant)).status).toBe(200);
    const replayed = await postTelemetrySession(t, run, grant);
    expect(replayed.status).toBe(409);
    expect(await codeOf(replayed)).toBe("nonce_reused");

    // Another run of the same hotkey (a cancelled run retried): a grant signed for that run,
    // valid in every other way, but carrying a nonce the hotkey already spent.
    const first = await preparedRun(t);
    const spent = grantFor(first);
    expect((await postTelemetrySession(t, first, spent)).status).toBe(200);
    const evalAction = (path: string, json: unknown) =>
      t.signedFetch(`/submissions/${first.submissionId}/eval/${path}`, {
        method: "POST",
        miner: first.miner,
        json,
      });
    expect((await evalAction("cancel", { expected_run_id: first.runId })).status).toBe(200);
    const second = await issuedRun(
      first,
      await evalAction("retry", { expected_run_id: first.runId }),
    );
    expect(second.runId).not.toBe(first.runId);
    expect(second.miner.address).toBe(first.miner.address);
    const reused = await postTelemetrySession(t, second, grantFor(second, { nonce: spent.nonce }));
    expect(reused.status).toBe(409);
    expect(await codeOf(reused)).toBe("nonce_reused");
    // The same grant with a fresh nonce opens the session: the nonce alone was refused.
    expect((await postTelemetrySession(t, second, grantFor(second))).status).toBe(200);
  });

  it("refuses a grant outside ±300 s, either way", async () => {
    const now = Math.floor(Date.now() / 1000);
    for (const timestamp of [now - 301 - 5, now + 301 + 5]) {
      const response = await postTelemetrySession(t, run, grantFor(run, { timestamp }));
      expect(response.status).toBe(401);
      expect(await codeOf(response)).toBe("timestamp_out_of_window");
    }
    // Within the window either way is fine.
    for (const timestamp of [now - 240, now + 240]) {
      expect((await postTelemetrySession(t, run, grantFor(run, { timestamp }))).status).toBe(200);
    }
  });

  it("refuses another hotkey's grant, a grant for another run, and a forged signature", async () => {
    const stranger = await createMinerKey();
    const foreign = signTelemetryGrant(stranger, { runId: run.runId, planSha256: run.planDigest });
    const byStranger = await postTelemetrySession(t, run, foreign);
    expect(byStranger.status).toBe(403);
    expect(await codeOf(byStranger)).toBe("hotkey_mismatch");

    // The miner's own grant for its other run opens nothing here (the message names the run).
    const sameMinerOtherRun = signTelemetryGrant(run.miner, {
      runId: other.runId,
      planSha256: other.planDigest,
    });
    const misdirected = await postTelemetrySession(t, run, sameMinerOtherRun);
    expect(misdirected.status).toBe(401);
    expect(await codeOf(misdirected)).toBe("invalid_signature");

    const forged = { ...grantFor(run), signature: `0x${"ab".repeat(64)}` };
    const bad = await postTelemetrySession(t, run, forged);
    expect(bad.status).toBe(401);
    expect(await codeOf(bad)).toBe("invalid_signature");

    // A grant signed for another plan digest of the same run id is refused as well.
    const wrongPlan = signTelemetryGrant(run.miner, {
      runId: run.runId,
      planSha256: "0".repeat(64),
    });
    const wrong = await postTelemetrySession(t, run, wrongPlan);
    expect(wrong.status).toBe(401);
    expect(await codeOf(wrong)).toBe("invalid_signature");
  });

  it("takes no mnemonic and no other field, and needs the run token", async () => {
    const withMnemonic = { ...grantFor(run), mnemonic: run.miner.mnemonic };
    expect((await postTelemetrySession(t, run, withMnemonic)).status).toBe(422);
    const response = await postTelemetrySession(t, run, grantFor(run), {
      token: other.runToken,
    });
    expect(response.status).toBe(401);
    expect(await codeOf(response)).toBe("invalid_token");
  });

  it("progress needs X-Telemetry-Session of this run (rule 15)", async () => {
    const event = {
      type: "task.status",
      task_id: run.plan.task_set.task_ids[0],
      seq: 1,
      status: "running",
    };
    const none = await postProgress(t, run, null, event);
    expect(none.status).toBe(401);
    expect(await codeOf(none)).toBe("invalid_telemetry_session");
    const otherSession = await openTelemetry(t, other);
    const crossed = await postProgress(t, run, otherSession, event);
    expect(crossed.status).toBe(401);
    expect(await codeOf(crossed)).toBe("invalid_telemetry_session");
    const made_up = await postProgress(t, run, "A".repeat(43), event);
    expect(made_up.status).toBe(401);
    // The session without the run token is nothing either.
    const session = await openTelemetry(t, run);
    const noToken = await postProgress(t, run, session, event, { token: other.runToken });
    expect(noToken.status).toBe(401);
    expect(await codeOf(noToken)).toBe("invalid_token");
  });

  it("keeps per-task sequences increasing; an identical repeat is recorded once", async () => {
    const session = await openTelemetry(t, run);
    const [first, second] = run.plan.task_set.task_ids as [string, string];
    const running = { type: "task.status", task_id: first, seq: 10, status: "running", trial: 1 };
    const ok = await postProgress(t, run, session, running);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ recorded: true, duplicate: false, seq: 10 });
    const again = await postProgress(t, run, session, running);
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ recorded: false, duplicate: true });
    const conflict = await postProgress(t, run, session, { ...running, status: "failed" });
    expect(conflict.status).toBe(409);
    expect(await codeOf(conflict)).toBe("seq_conflict");
    const backwards = await postProgress(t, run, session, { ...running, seq: 9 });
    expect(backwards.status).toBe(409);
    expect(await codeOf(backwards)).toBe("seq_not_increasing");
    // Sequences are per task: another task starts wherever it likes.
    const progress = {
      type: "task.progress",
      task_id: second,
      seq: 1,
      completed_trials: 1,
      total_trials: run.plan.trials,
    };
    expect((await postProgress(t, run, session, progress)).status).toBe(200);
    expect(
      (await postProgress(t, run, session, { ...running, seq: 11, status: "finished" })).status,
    ).toBe(200);
    const stored = await t.sql<{ task_id: string; seq: number; kind: string }[]>`
      select task_id, seq, kind from eval_task_events where run_id = ${run.runId} order by id`;
    expect(stored.filter((row) => row.task_id === first).map((row) => row.seq)).toEqual([10, 11]);
    expect(stored.filter((row) => row.task_id === second)).toEqual([
      { task_id: second, seq: 1, kind: "task.progress" },
    ]);
  });

  it("refuses score-shaped and unknown fields, unknown tasks and trials, and big bodies", async () => {
    const session = await openTelemetry(t, run);
    const task = run.plan.task_set.task_ids[2]!;
    const base = { type: "task.status", task_id: task, seq: 1, status: "finished" };
    for (const extra of [
      { score: 1 },
      { scores: [1, 1] },
      { weight: 1 },
      { trial_scores: [1] },
      { passed: true },
    ]) {
      const response = await postProgress(t, run, session, { ...base, ...extra });
      expect(response.status, JSON.stringify(extra)).toBe(422);
    }
    const unknown = await postProgress(t, run, session, { ...base, task_id: "no-such-task" });
    expect(unknown.status).toBe(409);
    expect(await codeOf(unknown)).toBe("unknown_task");
    const trial = await postProgress(t, run, session, { ...base, trial: run.plan.trials + 1 });
    expect(trial.status).toBe(409);
    expect(await codeOf(trial)).toBe("unknown_trial");
    const big = await postProgress(t, run, session, { ...base, message: "x".repeat(17 * 1024) });
    expect(big.status).toBe(413);
    const [count] = await t.sql<{ n: number }[]>`
      select count(*)::int as n from eval_task_events where run_id = ${run.runId} and task_id = ${task}`;
    expect(count!.n).toBe(0);
  });

  it("stores a progress message redacted: key shapes and the miner's env values", async () => {
    const secretive = await preparedRun(t, {
      env: { SERVICE_PASSPHRASE: "correct-horse-battery" },
    });
    const session = await openTelemetry(t, secretive);
    const task = secretive.plan.task_set.task_ids[0]!;
    const message = "using correct-horse-battery and sk-abcdefghijklmnopqrstuvwx to call the model";
    const event = { type: "task.status", task_id: task, seq: 1, status: "running", message };
    expect((await postProgress(t, secretive, session, event)).status).toBe(200);
    const [row] = await t.sql<{ payload: string }[]>`
      select payload::text as payload from eval_task_events where run_id = ${secretive.runId}`;
    expect(row!.payload).not.toContain("correct-horse-battery");
    expect(row!.payload).not.toContain("sk-abcdefghijklmnopqrstuvwx");
    expect(row!.payload).toContain("[REDACTED]");
    // The same event again is still a duplicate, not a conflict: redaction is deterministic.
    const again = await postProgress(t, secretive, session, event);
    expect(await again.json()).toMatchObject({ duplicate: true });

    // The value encoded inside a message: hex, base64 (inside a longer encoding), reversed.
    const value = Buffer.from("correct-horse-battery");
    const encoded = [
      `hex ${value.toString("hex")}`,
      `HEX ${value.toString("hex").toUpperCase()}`,
      `basic ${Buffer.from(`u:${value}`).toString("base64")}`,
      `reversed ${[...value.toString()].reverse().join("")}`,
    ];
    for (const [index, message] of encoded.entries()) {
      const encodedEvent = { ...event, seq: 2 + index, message };
      expect((await postProgress(t, secretive, session, encodedEvent)).status).toBe(200);
    }
    const rows = await t.sql<{ message: string }[]>`
      select payload ->> 'message' as message from eval_task_events
      where run_id = ${secretive.runId} and seq > 1 order by seq`;
    expect(rows.map((row) => row.message)).toEqual([
      "hex [REDACTED]",
      "HEX [REDACTED]",
      expect.stringMatching(/^basic \S*\[REDACTED\]\S*$/),
      "reversed [REDACTED]",
    ]);
  });

  it("never moves a score (rule 14), and ends with the result", async () => {
    const session = await openTelemetry(t, run);
    const task = run.plan.task_set.task_ids[3]!;
    for (let seq = 1; seq <= 5; seq++) {
      const event = {
        type: "task.progress",
        task_id: task,
        seq,
        completed_trials: 2,
        total_trials: 2,
      };
      expect((await postProgress(t, run, session, event)).status).toBe(200);
    }
    expect(await runState(run.runId)).toEqual({ state: "running", score: null });
    const half = Object.fromEntries(
      run.plan.task_set.task_ids.map((id, index) => [id, index % 2 === 0 ? [1, 1] : [0, 0]]),
    );
    const receipt = await postResult(t, run, await resultFor(run, { trials: half }));
    expect(receipt.status).toBe(202);
    expect(await runState(run.runId)).toEqual({ state: "accepted", score: 0.5 });
    // After the result telemetry is over; the score is what the result said.
    const late = await postProgress(t, run, session, {
      type: "task.status",
      task_id: task,
      seq: 99,
      status: "finished",
    });
    expect(late.status).toBe(409);
    expect(await codeOf(late)).toBe("run_not_running");
    const reopen = await postTelemetrySession(t, run, grantFor(run));
    expect(reopen.status).toBe(409);
    expect(await codeOf(reopen)).toBe("run_not_running");
    expect(await runState(run.runId)).toEqual({ state: "accepted", score: 0.5 });
  });
});
