// The SDK's broker client (`brokerTaskRunner`) against the REAL broker: a master on a real
// socket, a real Docker engine, the test images. The SDK's own suite talks to a hand-written
// stand-in; this one is what keeps the two sides of the wire honest with each other (codes,
// statuses, field names, Retry-After, cleanup on abort). It lives in the master's tests
// because the dependency runs one way: the master may import the SDK, never the reverse.

import {
  brokerTaskRunner,
  type Task,
  TaskAbortedError,
  TaskAuthError,
  type TaskEvent,
  TaskQuotaError,
  TaskRejectedError,
  type TaskRunner,
  taskFile,
} from "@platform/challenge-sdk/tasks";
import { testBackends } from "@platform/core/testing";
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { brokerOf } from "../../src/broker/broker-routes.js";
import { startTestMaster, type TestMaster } from "../test-master.js";
import {
  brokerTestConfig,
  createChallenge,
  dockerForTests,
  eventually,
  IMAGES,
  leftoversOf,
  type TestChallenge,
} from "./docker-test-env.js";

const env = await dockerForTests();
// The wire does not depend on the database or the executor: one of each is enough here.
const [backend] = await testBackends();

describe.skipIf(!env)("the SDK's brokerTaskRunner against the master's broker", () => {
  const docker = env?.docker as Docker;
  let t: TestMaster;
  let base: string;
  let challenge: TestChallenge;
  let masterId: string;
  const runners: TaskRunner[] = [];

  beforeAll(async () => {
    t = await startTestMaster(
      backend!,
      brokerTestConfig("engine", (config) => {
        config.broker.maxConcurrent = 1;
      }),
    );
    base = (await t.listen()).admin.url;
    challenge = await createChallenge(t, "sdk-client");
    masterId = await brokerOf(t.master.context)!.ledger.instanceId();
  });
  afterAll(async () => {
    for (const runner of runners) await runner.close();
    await t?.close();
    if (t) expect(await leftoversOf(docker, masterId, false)).toEqual([]);
  });

  const runner = (overrides: { brokerToken?: string; slug?: string } = {}) => {
    const made = brokerTaskRunner({
      masterUrl: base,
      brokerToken: overrides.brokerToken ?? challenge.token,
      slug: overrides.slug ?? challenge.slug,
      env: {},
    });
    runners.push(made);
    return made;
  };
  const task = (jobId: string, script: string, extra: Partial<Task> = {}): Task => ({
    jobId,
    image: IMAGES.busybox,
    command: ["sh", "-c", script],
    timeoutSeconds: 60,
    ...extra,
  });
  const rowOf = async (containerName: string) =>
    (
      await t.master.database.sql<{ status: string; returncode: number | null }[]>`
        select status, returncode from broker_runs where container_name = ${containerName}`
    )[0];

  it("runs a task with its files and environment, and maps the broker's answer and events", async () => {
    const events: TaskEvent[] = [];
    const result = await runner().run(
      task("hello", 'cat /workspace/in/greeting.txt; echo "seed=$SEED"; echo warn >&2; exit 3', {
        env: { SEED: "7" },
        files: [taskFile("in/greeting.txt", "hello from a file\n")],
      }),
      { onEvent: (event) => events.push(event) },
    );
    expect(result).toMatchObject({
      stdout: "hello from a file\nseed=7\n",
      stderr: "warn\n",
      exitCode: 3,
      timedOut: false,
      oomKilled: false,
      stdoutTruncated: false,
      stderrTruncated: false,
    });
    expect(result.containerName).toMatch(/^platform-sdk-client-hello-[0-9a-f]{8}$/);
    expect(result.durationMs).toBeGreaterThan(0);
    expect(events.map((e) => (e.type === "log" ? `log:${e.stream}:${e.line}` : e.type))).toEqual([
      "queued",
      "started",
      "log:stdout:hello from a file",
      "log:stdout:seed=7",
      "log:stderr:warn",
      "finished",
    ]);
    expect(await rowOf(result.containerName)).toMatchObject({ status: "exited", returncode: 3 });
  });

  it("maps the broker's 401 broker_unauthorized to a TaskAuthError, never echoing the token", async () => {
    const wrongToken = "pt_wrong-token-value-000000000000";
    const error = await runner({ brokerToken: wrongToken })
      .run(task("auth", "true"))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskAuthError);
    expect(error).toMatchObject({ code: "broker_unauthorized", retryable: false, status: 401 });
    expect((error as Error).message).toMatch(/BROKER_TOKEN/);
    expect((error as Error).message).not.toContain(wrongToken);
    // Another challenge's slug with this token: the same 401, no oracle on which was wrong.
    const otherSlug = await runner({ slug: "someone-else" })
      .run(task("auth-slug", "true"))
      .catch((e: unknown) => e);
    expect(otherSlug).toMatchObject({ code: "broker_unauthorized", status: 401 });
  });

  it("maps the broker's 400 refusals to a TaskRejectedError with the broker's code", async () => {
    const error = await runner()
      .run(task("evil-image", "true", { image: "docker.io/library/busybox:1" }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskRejectedError);
    expect(error).toMatchObject({ code: "image_not_allowed", retryable: false, status: 400 });
  });

  it("names the task's own fields when the broker refuses a limit, never the wire's", async () => {
    const error = await runner()
      .run(task("too-big", "true", { limits: { memoryMb: 999_999 } }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskRejectedError);
    expect(error).toMatchObject({ code: "limit_exceeded", status: 400 });
    expect((error as Error).message).toContain("memoryMb");
    expect((error as Error).message).not.toContain("memory_mb");
  });

  it("reports a timeout as timedOut with no exit code, and the broker records it", async () => {
    const result = await runner().run(
      task("sleepy", "echo started; sleep 60", { timeoutSeconds: 2 }),
    );
    expect(result).toMatchObject({ timedOut: true, exitCode: null, stdout: "started\n" });
    expect(await rowOf(result.containerName)).toMatchObject({ status: "timed_out" });
  });

  it("reports output cut at limits.outputBytes, per stream", async () => {
    const result = await runner().run(
      task("chatty", "yes abcdefghij | head -c 5000; echo short >&2", {
        limits: { outputBytes: 1024 },
      }),
    );
    expect(result.stdout).toHaveLength(1024);
    expect(result).toMatchObject({
      stdoutTruncated: true,
      stderr: "short\n",
      stderrTruncated: false,
      exitCode: 0,
    });
  });

  it("reports an out-of-memory kill", async () => {
    const result = await runner().run({
      jobId: "hog",
      image: IMAGES.memhog,
      limits: { memoryMb: 32 },
      timeoutSeconds: 60,
    });
    expect(result.oomKilled).toBe(true);
    expect(result.exitCode).not.toBe(0);
  });

  it("maps a full quota (429) to a retryable TaskQuotaError with the broker's Retry-After", async () => {
    const abort = new AbortController();
    // Settled at once, so a failure while the test waits is reported, not unhandled.
    const holding = runner()
      .run(task("holder", "sleep 60"), { signal: abort.signal })
      .catch((e: unknown) => e);
    await eventually(
      async () =>
        (
          await t.master.database
            .sql`select 1 from broker_runs where job_id = 'holder' and ended_at is null`
        ).length > 0,
      20_000,
      "the first task to take the only slot",
    );
    const error = await runner()
      .run(task("second", "true"))
      .catch((e: unknown) => e);
    abort.abort();
    expect(await holding).toBeInstanceOf(TaskAbortedError);
    expect(error).toBeInstanceOf(TaskQuotaError);
    expect(error).toMatchObject({ code: "quota_exceeded", retryable: true, status: 429 });
    expect((error as TaskQuotaError).retryAfterSeconds).toBeGreaterThan(0);
  });

  it("aborting a running task removes its container on the broker and rejects TaskAbortedError", async () => {
    const abort = new AbortController();
    const events: TaskEvent[] = [];
    const running = runner()
      .run(task("aborted", "sleep 60"), {
        signal: abort.signal,
        onEvent: (event) => events.push(event),
      })
      .catch((e: unknown) => e);
    await eventually(
      async () =>
        (await brokerOf(t.master.context)!.list(challenge.slug, "aborted")).some(
          (w) => w.state === "running",
        ),
      // Generous: under a full test run other suites start containers on the same engine.
      60_000,
      "the task's container to run",
    );
    abort.abort();
    const error = await running;
    expect(error).toBeInstanceOf(TaskAbortedError);
    expect(error).toMatchObject({ code: "aborted", retryable: true });
    expect(events.map((e) => e.type)).toEqual(["queued"]);
    await eventually(
      async () => (await leftoversOf(docker, masterId, false)).length === 0,
      20_000,
      "the aborted task's container to be removed",
    );
    const rows = await t.master.database.sql<{ ended: boolean }[]>`
      select ended_at is not null as ended from broker_runs where job_id = 'aborted'`;
    expect(rows).toEqual([{ ended: true }]);
  }, 120_000);

  it("maps a disabled challenge (403 challenge_disabled) to a TaskAuthError", async () => {
    const res = await t.fetch(`/v1/admin/challenges/${challenge.slug}/disable?reason=test`, {
      method: "POST",
      headers: t.admin,
    });
    expect(res.status).toBe(200);
    const error = await runner()
      .run(task("disabled", "true"))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskAuthError);
    expect(error).toMatchObject({ code: "challenge_disabled", retryable: false, status: 403 });
  });
});
