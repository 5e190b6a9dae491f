import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  brokerTaskRunner,
  type Task,
  TaskAbortedError,
  TaskAuthError,
  TaskError,
  type TaskEvent,
  TaskQuotaError,
  TaskRejectedError,
  TaskUnavailableError,
  taskFile,
  taskRunnerFor,
} from "../../src/tasks/index.js";

const TOKEN = "pt_broker-token-for-tests-0123456789";
const SLUG = "my-challenge";

interface Seen {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: Record<string, unknown>;
}

/**
 * A stand-in for the master's broker speaking its wire protocol: bearer + slug auth, the
 * BrokerRunRequest body, BrokerRunResponse answers and `{detail, code}` errors. What it does
 * is chosen by the task's job_id.
 */
function brokerServer() {
  const seen: Seen[] = [];
  const sockets = new Set<unknown>();
  const hungUp: string[] = [];
  const server: Server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString() || "{}") as Record<string, unknown>;
    seen.push({ method: req.method!, path: req.url!, headers: req.headers, body });
    const send = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(typeof value === "string" ? value : JSON.stringify(value));
    };
    if (
      req.headers.authorization !== `Bearer ${TOKEN}` ||
      req.headers["x-platform-challenge-slug"] !== SLUG
    ) {
      // The real broker's 401 (master broker-auth.ts), one answer for every credential mistake.
      return send(
        401,
        {
          detail:
            "A valid broker token (Authorization: Bearer) and X-Platform-Challenge-Slug are required",
          code: "broker_unauthorized",
        },
        { "www-authenticate": 'Bearer realm="platform-broker"' },
      );
    }
    if (req.url === "/v1/docker/cleanup")
      return send(200, { status: "ok", removed: [`platform-${SLUG}-${body["job_id"]}-1`] });
    if (req.url !== "/v1/docker/run") return send(404, { detail: "Not Found", code: "not_found" });
    const job = String(body["job_id"]);
    if (job.startsWith("ok")) {
      return send(200, {
        container_name: `platform-${SLUG}-${job}-abcd`,
        stdout: "first line\nsecond line\n",
        stderr: "a warning\n",
        returncode: 3,
        timed_out: false,
        stdout_truncated: false,
        stderr_truncated: true,
        oom_killed: false,
        duration_ms: 1234,
      });
    }
    if (job === "quota") {
      return send(
        429,
        { detail: "Workload quota exceeded: 4 of 4 containers in use", code: "quota_exceeded" },
        { "retry-after": "7" },
      );
    }
    if (job === "refused")
      return send(400, {
        detail: 'Image "evil/x" is not allowed for workloads',
        code: "image_not_allowed",
      });
    if (job === "too-big")
      return send(400, {
        detail:
          "limits.memory_mb: 9999 is above the maximum of 4096; a task may only lower the hardened defaults",
        code: "limit_exceeded",
        field: "limits.memory_mb",
        maximum: 4096,
      });
    if (job === "invalid")
      return send(422, {
        detail: [{ loc: ["body", "image"], msg: "Field required", type: "missing" }],
      });
    if (job === "removed")
      return send(409, {
        detail: "Workload was removed before it finished",
        code: "workload_removed",
      });
    if (job === "boom")
      return send(
        503,
        { detail: "The container engine is not reachable", code: "docker_unavailable" },
        { "retry-after": "10" },
      );
    if (job === "garbage") return send(200, "<html>not json</html>");
    if (job === "slow") {
      // Like the real broker, the answer comes when the container ends; the client hangs up first.
      res.on("close", () => hungUp.push(job));
      return;
    }
    return send(500, { detail: "unexpected job", code: "test_error" });
  });
  server.on("connection", (socket) => sockets.add(socket));
  return { server, seen, sockets, hungUp };
}

describe("brokerTaskRunner against a server speaking the broker's protocol", () => {
  const broker = brokerServer();
  let masterUrl: string;
  const runner = () => brokerTaskRunner({ masterUrl, brokerToken: TOKEN, slug: SLUG, env: {} });

  beforeAll(async () => {
    await new Promise<void>((resolve) => broker.server.listen(0, "127.0.0.1", resolve));
    masterUrl = `http://127.0.0.1:${(broker.server.address() as AddressInfo).port}/`;
  });
  beforeEach(() => {
    broker.seen.length = 0;
  });
  afterAll(async () => {
    // Runners that were never closed keep idle pooled sockets; they must not hold the server.
    broker.server.closeAllConnections();
    await new Promise((resolve) => broker.server.close(resolve));
  });

  const task = (jobId: string, extra: Partial<Task> = {}): Task => ({
    jobId,
    image: "platform-test/busybox:1",
    command: ["true"],
    ...extra,
  });

  it("posts the task with the broker bearer and slug, and maps the answer and its events", async () => {
    const r = runner();
    const events: TaskEvent[] = [];
    const files = [taskFile("main.py", "print(1)")];
    const result = await r.run(task("ok-1", { files, env: { SEED: "7" } }), {
      onEvent: (e) => events.push(e),
    });
    expect(result).toEqual({
      containerName: `platform-${SLUG}-ok-1-abcd`,
      stdout: "first line\nsecond line\n",
      stderr: "a warning\n",
      exitCode: 3,
      timedOut: false,
      oomKilled: false,
      stdoutTruncated: false,
      stderrTruncated: true,
      durationMs: 1234,
    });
    const [request] = broker.seen;
    expect(request).toMatchObject({ method: "POST", path: "/v1/docker/run" });
    expect(request!.headers).toMatchObject({
      authorization: `Bearer ${TOKEN}`,
      "x-platform-challenge-slug": SLUG,
      "content-type": "application/json",
    });
    // core's BrokerRunRequest, defaults filled in, nothing else: the camelCase task on the wire.
    expect(request!.body).toEqual({
      job_id: "ok-1",
      image: "platform-test/busybox:1",
      command: ["true"],
      files: [{ path: "main.py", content_base64: Buffer.from("print(1)").toString("base64") }],
      env: { SEED: "7" },
      timeout_seconds: 3600,
      gpus: 0,
    });
    expect(events.map((e) => (e.type === "log" ? `log:${e.stream}:${e.line}` : e.type))).toEqual([
      "queued",
      "started",
      "log:stdout:first line",
      "log:stdout:second line",
      "log:stderr:a warning",
      "finished",
    ]);
    expect(events.at(-1)).toMatchObject({
      type: "finished",
      exitCode: 3,
      timedOut: false,
      containerName: result.containerName,
    });
    await r.close();
  });

  it("sends init: false to the broker when the task asks for its command as PID 1", async () => {
    const r = runner();
    await r.run(task("ok-own-init", { init: false }));
    expect(broker.seen[0]!.body).toMatchObject({ job_id: "ok-own-init", init: false });
    await r.close();
  });

  it("reuses one pooled connection across runs", async () => {
    const r = runner();
    const before = broker.sockets.size;
    for (let i = 0; i < 6; i++) await r.run(task(`ok-pool-${i}`));
    // Kept alive and reused: six runs, not six connections.
    expect(broker.sockets.size - before).toBeLessThanOrEqual(2);
    await r.close();
  });

  it("maps 429 to a retryable TaskQuotaError carrying Retry-After", async () => {
    const error = await runner()
      .run(task("quota"))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskQuotaError);
    expect(error).toMatchObject({
      code: "quota_exceeded",
      retryable: true,
      retryAfterSeconds: 7,
      status: 429,
    });
    expect((error as Error).message).toContain("4 of 4 containers");
  });

  it("maps 400 to a non-retryable TaskRejectedError with the broker's code", async () => {
    const error = await runner()
      .run(task("refused"))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskRejectedError);
    expect(error).toMatchObject({ code: "image_not_allowed", retryable: false, status: 400 });
    const invalid = await runner()
      .run(task("invalid"))
      .catch((e: unknown) => e);
    expect(invalid).toMatchObject({ code: "invalid_task", retryable: false, status: 422 });
    expect((invalid as Error).message).toContain("image: Field required");
  });

  it("names the task's own fields in a broker refusal, never the wire's", async () => {
    const error = await runner()
      .run(task("too-big"))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskRejectedError);
    expect(error).toMatchObject({
      code: "limit_exceeded",
      details: { field: "limits.memoryMb", maximum: 4096 },
    });
    expect((error as Error).message).toContain("limits.memoryMb: 9999 is above the maximum");
    expect((error as Error).message).not.toContain("memory_mb");
  });

  it("taskRunnerFor picks the broker when the master set its variables, else the local engine", async () => {
    const broker = taskRunnerFor({ masterUrl, brokerToken: TOKEN, slug: SLUG });
    expect(broker.kind).toBe("broker");
    expect((await broker.run(task("ok-for"))).exitCode).toBe(3);
    await broker.close();
    expect(taskRunnerFor({ masterUrl: null, brokerToken: null, slug: SLUG }).kind).toBe("docker");
    expect(taskRunnerFor({ masterUrl, brokerToken: null, slug: SLUG }).kind).toBe("docker");
  });

  it("maps 401 to a TaskAuthError that says what to check and never echoes the token", async () => {
    const wrong = brokerTaskRunner({
      masterUrl,
      brokerToken: "pt_wrong-token-value-000000000",
      slug: SLUG,
      env: {},
    });
    const error = await wrong.run(task("ok-auth")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskAuthError);
    expect(error).toMatchObject({ code: "broker_unauthorized", retryable: false, status: 401 });
    expect((error as Error).message).toMatch(/BROKER_TOKEN/);
    expect((error as Error).message).not.toContain("pt_wrong-token-value");
    const otherSlug = await brokerTaskRunner({
      masterUrl,
      brokerToken: TOKEN,
      slug: "someone-else",
      env: {},
    })
      .run(task("ok-slug"))
      .catch((e: unknown) => e);
    expect(otherSlug).toBeInstanceOf(TaskAuthError);
  });

  it("maps 409 and 5xx to retryable errors, and a broken answer to invalid_response", async () => {
    expect(
      await runner()
        .run(task("removed"))
        .catch((e: unknown) => e),
    ).toMatchObject({ code: "workload_removed", retryable: true });
    const unavailable = await runner()
      .run(task("boom"))
      .catch((e: unknown) => e);
    expect(unavailable).toBeInstanceOf(TaskUnavailableError);
    expect(unavailable).toMatchObject({
      code: "docker_unavailable",
      retryable: true,
      retryAfterSeconds: 10,
      status: 503,
    });
    expect(
      await runner()
        .run(task("garbage"))
        .catch((e: unknown) => e),
    ).toMatchObject({ code: "invalid_response", retryable: true });
  });

  it("aborting closes the request, asks the broker to clean the job up, and rejects TaskAbortedError", async () => {
    const abort = new AbortController();
    const events: TaskEvent[] = [];
    const running = runner().run(task("slow"), {
      signal: abort.signal,
      onEvent: (e) => events.push(e),
    });
    await vi_until(() => broker.seen.some((s) => s.body["job_id"] === "slow"));
    abort.abort();
    const error = await running.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskAbortedError);
    expect(error).toMatchObject({ code: "aborted", retryable: true });
    const cleanup = broker.seen.find((s) => s.path === "/v1/docker/cleanup");
    expect(cleanup).toMatchObject({ method: "POST", body: { job_id: "slow" } });
    expect(cleanup!.headers).toMatchObject({
      authorization: `Bearer ${TOKEN}`,
      "x-platform-challenge-slug": SLUG,
    });
    await vi_until(() => broker.hungUp.includes("slow"));
    expect(events.map((e) => e.type)).toEqual(["queued"]);
  });

  it("refuses a bad task locally: nothing is sent", async () => {
    const refused = await runner()
      .run({ ...task("ok-local"), privileged: true } as Task)
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "weakening_refused" });
    expect(
      await runner()
        .run(task("ok x"))
        .catch((e: unknown) => e),
    ).toMatchObject({ code: "invalid_task" });
    expect(
      await runner()
        .run(task("ok-f", { files: [{ path: "/etc/passwd", contentBase64: "" }] }))
        .catch((e: unknown) => e),
    ).toMatchObject({
      code: "invalid_file",
    });
    const aborted = new AbortController();
    aborted.abort();
    expect(
      await runner()
        .run(task("ok-a"), { signal: aborted.signal })
        .catch((e: unknown) => e),
    ).toBeInstanceOf(TaskAbortedError);
    expect(broker.seen).toHaveLength(0);
  });

  it("reports an unreachable master as retryable broker_unavailable", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = await brokerTaskRunner({
      masterUrl: `http://127.0.0.1:${port}`,
      brokerToken: TOKEN,
      slug: SLUG,
      env: {},
    })
      .run(task("ok-down"))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskUnavailableError);
    expect(error).toMatchObject({ code: "broker_unavailable", retryable: true });
    expect(error).toBeInstanceOf(TaskError);
  });

  it("reads its settings from the variables the master sets, and refuses bad ones", async () => {
    const fromEnv = brokerTaskRunner({
      env: { PLATFORM_MASTER_URL: masterUrl, BROKER_TOKEN: TOKEN, PLATFORM_CHALLENGE_SLUG: SLUG },
    });
    expect((await fromEnv.run(task("ok-env"))).exitCode).toBe(3);
    await fromEnv.close();
    expect(() =>
      brokerTaskRunner({ env: { BROKER_TOKEN: TOKEN, PLATFORM_CHALLENGE_SLUG: SLUG } }),
    ).toThrow(/PLATFORM_MASTER_URL/);
    expect(() =>
      brokerTaskRunner({ env: { PLATFORM_MASTER_URL: masterUrl, PLATFORM_CHALLENGE_SLUG: SLUG } }),
    ).toThrow(/BROKER_TOKEN/);
    expect(() =>
      brokerTaskRunner({ masterUrl: "ftp://x", brokerToken: TOKEN, slug: SLUG, env: {} }),
    ).toThrow(/http/);
    expect(() =>
      brokerTaskRunner({ masterUrl: "http://u:p@x", brokerToken: TOKEN, slug: SLUG, env: {} }),
    ).toThrow(/credentials/);
    expect(() =>
      brokerTaskRunner({ masterUrl, brokerToken: TOKEN, slug: "Bad Slug", env: {} }),
    ).toThrow(/slug/);
  });
});

async function vi_until(check: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await sleep(10);
  }
}
