// Rule 21 on both backends: the attempts route (run token + telemetry session, one attempt per
// trial, the same token again), and the events route: attributed from the attempt's own row
// whatever the body says, redacted before storage (every secret kind and the miner's env
// values: the raw row holds none), all or nothing, its caps, its credential (the attempt's
// bearer plus the slug; a wrong slug, another attempt's token, the run token and the challenge's
// internal token refused), 410 once the run ended, and never a score.
import { testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordAttemptEvents, storedEvent } from "../../src/live/attempt-events.js";
import { envSpellings } from "../../src/live/env-spellings.js";
import { type AgentEvalTest, startAgentEval } from "../agent-eval-kit.js";
import { postResult, resultFor } from "../eval/eval-kit.js";
import {
  errorCode,
  ndjson,
  type OpenedAttempt,
  openAttemptOf,
  postAttempt,
  postEvents,
  runningRun,
  storedLogs,
} from "./live-kit.js";

describe.each(await testBackends())("attempts and their events (rule 21) on %s", (backend) => {
  let t: AgentEvalTest;
  beforeAll(async () => {
    t = await startAgentEval(backend);
  });
  afterAll(() => t?.close());

  it("opens one attempt per trial: 201, then 200 with the same attempt and token", async () => {
    const run = await runningRun(t);
    const task = run.plan.task_set.task_ids[1]!;
    const first = await postAttempt(t, run, { task_id: task, trial: 2 });
    expect(first.status, await first.clone().text()).toBe(201);
    const opened = (await first.json()) as OpenedAttempt;
    expect(opened).toEqual({
      attempt_id: expect.stringMatching(/^[A-Za-z0-9_-]{24}$/),
      token: expect.stringMatching(/^[A-Za-z0-9_-]{24}\.[A-Za-z0-9_-]{43}$/),
      events_path: `/internal/v1/evaluations/${opened.attempt_id}/events`,
      challenge_slug: "agent-eval",
    });
    const again = await postAttempt(t, run, { task_id: task, trial: 2 });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(opened);
    const other = await openAttemptOf(t, run, { taskId: task, trial: 1 });
    expect(other.attempt_id).not.toBe(opened.attempt_id);
    const [row] = await t.sql<{ submission_id: string; token_sha256: string }[]>`
      select submission_id, token_sha256 from eval_attempts where id = ${opened.attempt_id}`;
    expect(Number(row!.submission_id)).toBe(run.submissionId);
    // Only the hash is stored.
    expect(row!.token_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(row!.token_sha256).not.toContain(opened.token.split(".")[1]!);
  });

  it("refuses an attempt outside the plan, without a session, or of a run not running", async () => {
    const run = await runningRun(t);
    const task = run.plan.task_set.task_ids[0]!;
    const unknown = await postAttempt(t, run, { task_id: "not-a-task", trial: 1 });
    expect(unknown.status).toBe(409);
    expect(await errorCode(unknown)).toBe("unknown_task");
    const beyond = await postAttempt(t, run, { task_id: task, trial: run.plan.trials + 1 });
    expect(beyond.status).toBe(409);
    expect(await errorCode(beyond)).toBe("unknown_trial");
    expect((await postAttempt(t, run, { task_id: task, trial: 0 })).status).toBe(422);
    const noSession = await postAttempt(t, run, { task_id: task, trial: 1 }, { session: null });
    expect(noSession.status).toBe(401);
    expect(await errorCode(noSession)).toBe("invalid_telemetry_session");
    const other = await runningRun(t);
    const foreign = await postAttempt(
      t,
      run,
      { task_id: task, trial: 1 },
      { session: other.session },
    );
    expect(foreign.status).toBe(401);
    expect(
      (await postAttempt(t, run, { task_id: task, trial: 1 }, { token: other.runToken })).status,
    ).toBe(401);
    // After its result the run is verifying or accepted: no new attempt.
    expect((await postResult(t, run, await resultFor(run))).status).toBe(202);
    const late = await postAttempt(t, run, { task_id: task, trial: 1 });
    expect(late.status).toBe(409);
    expect(await errorCode(late)).toBe("run_not_running");
  });

  it("attributes every line from the attempt's row, never from the body", async () => {
    const run = await runningRun(t);
    const other = await runningRun(t);
    const task = run.plan.task_set.task_ids[2]!;
    const attempt = await openAttemptOf(t, run, { taskId: task, trial: 2 });
    const response = await postEvents(
      t,
      attempt,
      ndjson([
        { message: "hello", stream: "stderr", at: "2026-01-01T00:00:00Z" },
        {
          message: "claims to be elsewhere",
          task_id: other.plan.task_set.task_ids[0],
          submission_id: other.submissionId,
          run_id: other.runId,
          attempt_id: "someone-else",
          trial: 1,
          kind: "task.status",
        },
      ]),
    );
    expect(response.status, await response.clone().text()).toBe(202);
    expect(await response.json()).toEqual({ recorded: 2, dropped: 0, truncated: 0 });
    const rows = await storedLogs(t, attempt.attempt_id);
    expect(
      rows.map((row) => [Number(row.submission_id), row.run_id, row.task_id, row.kind]),
    ).toEqual([
      [run.submissionId, run.runId, task, "task.log"],
      [run.submissionId, run.runId, task, "task.log"],
    ]);
    expect(rows[0]!.payload).toEqual({
      trial: 2,
      stream: "stderr",
      message: "hello",
      reported_at: "2026-01-01T00:00:00Z",
    });
    // Nothing but the known fields is stored.
    expect(rows[1]!.payload).toEqual({
      trial: 2,
      stream: "stdout",
      message: "claims to be elsewhere",
    });
    const [foreign] = await t.sql<{ count: string }[]>`
      select count(*) as count from eval_task_events where run_id = ${other.runId}`;
    expect(Number(foreign!.count)).toBe(0);
  });

  it("redacts every secret kind and the miner's env values before storage", async () => {
    const envSecret = "miner-env-value-7f3a9c";
    const shortValue = "abc";
    const quoted = 'quote"d-value-5678';
    const run = await runningRun(t, {
      env: { MY_SECRET: envSecret, MODE: shortValue, QUOTED: quoted },
    });
    const attempt = await openAttemptOf(t, run);
    const secrets = {
      openai: "sk-proj-AbCdEf0123456789GhIjKl",
      anthropic: "sk-ant-api03-ZYXWVUTSRQ0123456789abcdef",
      aws: "AKIAIOSFODNN7EXAMPLE",
      github: "ghp_0123456789abcdefghijABCDEFGHIJ012345",
      bearer: "opaque-bearer-value-99",
      basic: "dXNlcjpwYXNzd29yZA==",
      generic: "hunter2-correct-horse",
      jwt: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXNpZw",
    };
    const lines = [
      `calling with OPENAI_API_KEY=${secrets.openai}`,
      `anthropic key ${secrets.anthropic} loaded`,
      `aws ${secrets.aws}`,
      `git clone https://${secrets.github}@github.com/x/y`,
      `curl -H "Authorization: Bearer ${secrets.bearer}"`,
      `authorization: Basic ${secrets.basic}`,
      `{"db_password": "${secrets.generic}"}`,
      `jwt ${secrets.jwt}`,
      `the run token is ${run.runToken} and mine is ${attempt.token}`,
      `env says ${envSecret}, mode ${shortValue}`,
      // The env value as an agent may print it: inside JSON, and URL-encoded.
      `config ${JSON.stringify({ v: quoted })} and ?q=${encodeURIComponent(quoted)}`,
    ];
    const response = await postEvents(t, attempt, ndjson(lines.map((message) => ({ message }))));
    expect(response.status, await response.clone().text()).toBe(202);
    const rows = await t.sql<{ raw: string }[]>`
      select payload::text as raw from eval_task_events
      where attempt_id = ${attempt.attempt_id} order by id`;
    expect(rows).toHaveLength(lines.length);
    const stored = rows.map((row) => row.raw).join("\n");
    for (const secret of [
      ...Object.values(secrets),
      run.runToken,
      attempt.token,
      run.runToken.split(".")[1]!,
      attempt.token.split(".")[1]!,
      envSecret,
      "d-value-5678",
    ]) {
      expect(stored, secret).not.toContain(secret);
    }
    expect(stored).toContain("[REDACTED]");
    // What is not secret survives: the prose, and a short env value (under 4 characters).
    expect(stored).toContain("calling with OPENAI_API_KEY=");
    expect(stored).toContain(`mode ${shortValue}`);
  });

  it("redacts the env values in every spelling, and the pieces of one a cut left", async () => {
    const value = "Q7f3a9c2e41b8d6Z-miner-key";
    const run = await runningRun(t, { env: { MINER_KEY: value } });
    const attempt = await openAttemptOf(t, run);
    const bytes = Buffer.from(value);
    const lines = [
      // Cut by a worker that capped the line before redacting it, or split into two lines.
      `${"x".repeat(2000)} ${value.slice(0, 12)}`,
      `${value.slice(-7)} continues here`,
      `basic ${Buffer.from(`miner:${value}`).toString("base64")}`,
      `b64 ${bytes.toString("base64")} b64url ${bytes.toString("base64url")}`,
      `hex ${bytes.toString("hex")} HEX ${bytes.toString("hex").toUpperCase()}`,
      `reversed ${[...value].reverse().join("")}`,
      `escaped ${[...value].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("")}`,
    ];
    const response = await postEvents(t, attempt, ndjson(lines.map((message) => ({ message }))));
    expect(response.status, await response.clone().text()).toBe(202);
    const stored = (await storedLogs(t, attempt.attempt_id)).map((row) => row.payload.message);
    expect(stored[0]).toBe(`${"x".repeat(2000)} [REDACTED]`);
    expect(stored[1]).toBe("[REDACTED] continues here");
    for (const message of stored.slice(2)) expect(message).toContain("[REDACTED]");
    const all = stored.join("\n");
    for (const piece of [
      value.slice(0, 8),
      value.slice(-7),
      bytes.toString("hex").slice(0, 16),
      bytes.toString("base64").slice(0, 12),
      [...value].reverse().join("").slice(0, 8),
      "\\u0051\\u0037",
    ]) {
      expect(all, piece).not.toContain(piece);
    }
  });

  it("redacts a line before cutting it to the event cap: a value across the cut leaves no piece", () => {
    const value = "Q7f3a9c2e41b8d6Z-miner-key";
    const secrets = { exact: envSpellings([value]) };
    const room =
      1000 -
      Buffer.byteLength(
        JSON.stringify({ trial: 1, stream: "stdout", message: "", truncated: true }),
      );
    // 6 characters of the value before the cut, and 3: under the cut-edge pass's 4, which only
    // redacting the whole line first hides.
    for (const before of [6, 3]) {
      const message = `${"a".repeat(room - before)}${value}${"b".repeat(100)}`;
      const { payload } = storedEvent({ stream: "stdout", message, at: null }, 1, secrets, 1000);
      expect(payload.truncated).toBe(true);
      expect(payload.message).toBe(`${"a".repeat(room - before)}${"[REDACTED]".slice(0, before)}`);
      expect(payload.message).not.toContain(value.slice(0, Math.min(before, 4)));
    }
  });

  it("stores all lines or none: a bad line is 422 with its number", async () => {
    const run = await runningRun(t);
    const attempt = await openAttemptOf(t, run);
    const cases: [string, number][] = [
      [ndjson([{ message: "ok" }, "{not json", { message: "ok" }]), 2],
      [ndjson([{ message: "ok" }, { message: "ok" }, { message: 3 }]), 3],
      [ndjson([[1, 2]]), 1],
      [ndjson([{ message: "ok", stream: "stdin" }]), 1],
      [ndjson([{ message: "ok", at: "yesterday" }]), 1],
    ];
    for (const [body, line] of cases) {
      const response = await postEvents(t, attempt, body);
      expect(response.status, body).toBe(422);
      expect(await response.json()).toMatchObject({ code: "invalid_event_line", line });
    }
    expect(await storedLogs(t, attempt.attempt_id)).toEqual([]);
    const tooMany = await postEvents(
      t,
      attempt,
      ndjson(Array.from({ length: 513 }, (_, index) => ({ message: `line ${index}` }))),
    );
    expect(tooMany.status).toBe(413);
    expect(await errorCode(tooMany)).toBe("too_many_lines");
    const notNdjson = await postEvents(t, attempt, ndjson([{ message: "ok" }]), {
      contentType: "application/json",
    });
    expect(notNdjson.status).toBe(415);
    const huge = await postEvents(t, attempt, "x".repeat(4 * 1024 * 1024 + 1));
    expect(huge.status).toBe(413);
    expect(await storedLogs(t, attempt.attempt_id)).toEqual([]);
    // Blank lines are not lines; 512 real ones are fine.
    const full = await postEvents(
      t,
      attempt,
      `\n\n${ndjson(Array.from({ length: 512 }, (_, index) => ({ message: `line ${index}` })))}\n`,
    );
    expect(full.status).toBe(202);
    expect(await full.json()).toEqual({ recorded: 512, dropped: 0, truncated: 0 });
  });

  it("cuts an event to 64 KiB of stored payload and counts it truncated", async () => {
    const run = await runningRun(t);
    const attempt = await openAttemptOf(t, run);
    // Quotes and control characters take more bytes as JSON than as characters.
    const message = `${"a".repeat(40_000)}"\u0001é${"b".repeat(60_000)}`;
    const response = await postEvents(t, attempt, ndjson([{ message }, { message: "small" }]));
    expect(await response.json()).toEqual({ recorded: 2, dropped: 0, truncated: 1 });
    const [cut, small] = await storedLogs(t, attempt.attempt_id);
    expect(cut!.payload.truncated).toBe(true);
    expect(cut!.bytes).toBeLessThanOrEqual(64 * 1024);
    expect(cut!.bytes).toBeGreaterThan(64 * 1024 - 16);
    expect(cut!.bytes).toBe(Buffer.byteLength(JSON.stringify(cut!.payload)));
    expect(message.startsWith(cut!.payload.message)).toBe(true);
    expect(small!.payload).toEqual({ trial: 1, stream: "stdout", message: "small" });
    const [attemptRow] = await t.sql<{ log_bytes: string }[]>`
      select log_bytes from eval_attempts where id = ${attempt.attempt_id}`;
    expect(Number(attemptRow!.log_bytes)).toBe(cut!.bytes + small!.bytes);
  });

  it("stores what jsonb refuses as U+FFFD: NUL and lone surrogates", async () => {
    const run = await runningRun(t);
    const attempt = await openAttemptOf(t, run);
    // Written by hand: JSON.stringify would escape the lone surrogate the same way.
    const body = '{"message":"nul\\u0000here \\ud800 lone \\ud83d\\ude00 pair"}\n';
    const response = await postEvents(t, attempt, body);
    expect(response.status, await response.clone().text()).toBe(202);
    const [row] = await storedLogs(t, attempt.attempt_id);
    expect(row!.payload.message).toBe("nul\uFFFDhere \uFFFD lone \u{1F600} pair");
  });

  it("drops and counts lines past the task and submission caps", async () => {
    const run = await runningRun(t);
    const [taskA, taskB] = run.plan.task_set.task_ids as [string, string];
    const a1 = await openAttemptOf(t, run, { taskId: taskA, trial: 1 });
    const a2 = await openAttemptOf(t, run, { taskId: taskA, trial: 2 });
    const b1 = await openAttemptOf(t, run, { taskId: taskB, trial: 1 });
    const line = { stream: "stdout" as const, message: "x".repeat(50), at: null };
    const bytes = Buffer.byteLength(
      JSON.stringify({ trial: 1, stream: "stdout", message: line.message }),
    );
    const caps = { eventBytes: 1000, taskBytes: bytes * 3, submissionBytes: bytes * 5 };
    const record = (attemptId: string, count: number) =>
      recordAttemptEvents(t.sql, {
        attemptId,
        lines: Array(count).fill(line),
        secretKey: t.state.secretKey,
        caps,
      });
    // The task cap counts both trials of the task.
    expect(await record(a1.attempt_id, 2)).toEqual({ recorded: 2, dropped: 0, truncated: 0 });
    expect(await record(a2.attempt_id, 2)).toEqual({ recorded: 1, dropped: 1, truncated: 0 });
    // Another task has its own task cap, under the submission's.
    expect(await record(b1.attempt_id, 4)).toEqual({ recorded: 2, dropped: 2, truncated: 0 });
    expect(await record(b1.attempt_id, 1)).toEqual({ recorded: 0, dropped: 1, truncated: 0 });
    const [total] = await t.sql<{ count: string }[]>`
      select count(*) as count from eval_task_events where run_id = ${run.runId}`;
    expect(Number(total!.count)).toBe(5);
  });

  it("opens only with the attempt's own bearer and this challenge's slug", async () => {
    const run = await runningRun(t);
    const attempt = await openAttemptOf(t, run);
    const otherAttempt = await openAttemptOf(t, run, { trial: 2 });
    const body = ndjson([{ message: "x" }]);
    const refusals: [string, Parameters<typeof postEvents>[3], number, string][] = [
      ["no bearer", { token: null }, 401, "invalid_internal_token"],
      ["another attempt's token", { token: otherAttempt.token }, 401, "invalid_internal_token"],
      ["the run token", { token: run.runToken }, 401, "invalid_internal_token"],
      ["the challenge's internal token", { token: t.token }, 401, "invalid_internal_token"],
      [
        "a forged MAC",
        { token: `${attempt.attempt_id}.${"A".repeat(43)}` },
        401,
        "invalid_internal_token",
      ],
      ["no slug", { slug: null }, 403, "challenge_slug_mismatch"],
      ["another challenge's slug", { slug: "scoring" }, 403, "challenge_slug_mismatch"],
    ];
    for (const [what, options, status, code] of refusals) {
      const response = await postEvents(t, attempt, body, options);
      expect(response.status, what).toBe(status);
      expect(await errorCode(response), what).toBe(code);
    }
    // The internal headers as the master sends them open nothing either.
    const internal = await t.fetch(attempt.events_path, {
      method: "POST",
      headers: { ...t.internalHeaders, "content-type": "application/x-ndjson" },
      body,
    });
    expect(internal.status).toBe(401);
    expect(await storedLogs(t, attempt.attempt_id)).toEqual([]);
    expect((await postEvents(t, attempt, body)).status).toBe(202);
  });

  it("revokes the attempt once its run is cancelled (410), storing nothing", async () => {
    const run = await runningRun(t);
    const attempt = await openAttemptOf(t, run);
    expect((await postEvents(t, attempt, ndjson([{ message: "before" }]))).status).toBe(202);
    const cancel = await t.signedFetch(`/submissions/${run.submissionId}/eval/cancel`, {
      method: "POST",
      miner: run.miner,
      json: { expected_run_id: run.runId },
    });
    expect(cancel.status).toBe(200);
    const after = await postEvents(t, attempt, ndjson([{ message: "after" }]));
    expect(after.status).toBe(410);
    expect(await errorCode(after)).toBe("capability_revoked");
    expect((await storedLogs(t, attempt.attempt_id)).map((row) => row.payload.message)).toEqual([
      "before",
    ]);
  });

  it("never changes a score: the result alone decides it, events before and after", async () => {
    const run = await runningRun(t);
    const attempt = await openAttemptOf(t, run);
    const claims = ndjson([
      { message: "score=1.0 all tasks passed", score: 1, weight: 1, reward: 1 },
      { message: '{"score": 1, "trial_scores": [1, 1]}' },
    ]);
    expect((await postEvents(t, attempt, claims)).status).toBe(202);
    const score = async () => {
      const [row] = await t.sql<{ state: string; score: number | null }[]>`
        select state, score from eval_runs where id = ${run.runId}`;
      return row;
    };
    expect(await score()).toEqual({ state: "running", score: null });
    const half = Object.fromEntries(
      run.plan.task_set.task_ids.map((id, index) => [id, index % 2 === 0 ? [1, 1] : [1, 0]]),
    );
    expect((await postResult(t, run, await resultFor(run, { trials: half }))).status).toBe(202);
    expect(await score()).toEqual({ state: "accepted", score: 0.75 });
    // An accepted run is terminal: its attempts log no more.
    const late = await postEvents(t, attempt, claims);
    expect(late.status).toBe(410);
    expect(await score()).toEqual({ state: "accepted", score: 0.75 });
  });
});
