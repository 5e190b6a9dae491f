// One miner upload is one trace: the master's proxy (native signed upload) -> the challenge's
// bridge handler -> its database writes -> the job it enqueued -> the SDK's broker client -> the
// master's broker route -> the broker's run of the container. Tracing is on for this file (an
// in-memory exporter, the OpenTelemetry SDK's own); every hop must be a child of the one before.
import { randomBytes } from "node:crypto";
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { defineChallenge, json, type RunningChallenge } from "@platform/challenge-sdk";
import { createJobQueue, type JobQueue, processNext } from "@platform/challenge-sdk/jobs";
import { brokerTaskRunner, type TaskRunner } from "@platform/challenge-sdk/tasks";
import {
  generateMnemonic,
  initCrypto,
  keypairFromMnemonic,
  signRequest,
  startTracing,
  type Tracing,
} from "@platform/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  brokerTestConfig,
  createChallenge,
  dockerForTests,
  IMAGES,
} from "../broker/docker-test-env.js";
import { rawRequest } from "../proxy/echo-upstream.js";
import { jsonInit, startTestMaster, type TestMaster } from "../test-master.js";

const exporter = new InMemorySpanExporter();
// Before anything else starts: the master and the challenge find tracing on and keep it.
const tracing: Tracing = await startTracing({
  serviceName: "upload-trace-test",
  spanProcessors: [new SimpleSpanProcessor(exporter)],
});
const env = await dockerForTests();

describe.skipIf(!env)("one upload, one trace", () => {
  let t: TestMaster;
  let running: RunningChallenge;
  let runner: TaskRunner;
  let queue: JobQueue<{ submission: number }>;
  let publicUrl: string;
  const lines: string[] = [];
  const realWrite = process.stderr.write.bind(process.stderr);

  beforeAll(async () => {
    await initCrypto();
    t = await startTestMaster("pglite", brokerTestConfig("engine"));
    const server = await t.listen();
    publicUrl = server.url;
    const registered = await createChallenge(t, "traced", { status: "draft" });
    runner = brokerTaskRunner({
      masterUrl: server.admin.url,
      brokerToken: registered.token,
      slug: "traced",
      env: {},
    });
    const challenge = defineChallenge({
      slug: "traced",
      version: "1.0.0",
      weights: () => ({}),
      setup: async ({ sql }) => {
        await sql`create table if not exists traced_submissions (id serial primary key, hotkey text, bytes int)`;
        queue = createJobQueue(sql, { queue: "traced-work" });
      },
      routes: (router) =>
        router.bridge({
          method: "POST",
          path: "/internal/v1/bridge/submissions",
          body: "raw",
          contentTypes: ["application/zip"],
          handler: async ({ sql, miner, body, log }) => {
            const [row] = await sql<{ id: number }[]>`
              insert into traced_submissions (hotkey, bytes) values (${miner.hotkey}, ${body.byteLength})
              returning id`;
            await queue.enqueue({ submission: row!.id });
            log.info("submission stored", { submission: row!.id });
            return json({ id: row!.id }, { status: 201 });
          },
        }),
    });
    running = await challenge.start({
      host: "127.0.0.1",
      port: 0,
      memory: true,
      env: { CHALLENGE_TOKEN: registered.challengeToken, LOG_LEVEL: "info" },
    });
    const activated = await t.fetch(
      "/v1/admin/challenges/traced",
      jsonInit("PATCH", { status: "active", internal_base_url: running.url }, t.admin),
    );
    expect(activated.status).toBe(200);
    // The challenge logs to stderr: keep its lines to check they name the trace.
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      lines.push(String(chunk));
      return (realWrite as (...args: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof process.stderr.write;
  });
  afterAll(async () => {
    process.stderr.write = realWrite;
    await running?.close();
    await runner?.close();
    await t?.close();
    await tracing.shutdown();
  });

  it("links the proxy, the challenge's handler and writes, the job and the broker's run", async () => {
    await tracing.flush();
    exporter.reset();
    const miner = keypairFromMnemonic(generateMnemonic());
    const path = "/v1/challenges/traced/submissions";
    const body = randomBytes(64);
    const upload = await rawRequest(publicUrl, {
      method: "POST",
      path,
      headers: {
        ...(signRequest(miner, {
          method: "POST",
          url: path,
          body,
          slug: "traced",
        }) as unknown as Record<string, string>),
        "content-type": "application/zip",
        "content-length": String(body.length),
      },
      body,
    });
    expect(upload.status).toBe(201);
    const processed = await processNext(queue, (job, { signal }) =>
      runner.run(
        {
          jobId: `submission-${job.payload.submission}`,
          image: IMAGES.busybox,
          command: ["true"],
          timeoutSeconds: 60,
        },
        { signal },
      ),
    );
    expect(processed?.outcome).toBe("completed");
    await tracing.flush();
    const spans = exporter.getFinishedSpans();
    const one = (name: string) => {
      const found = spans.filter((span) => span.name === name);
      expect(
        found.map((span) => span.name),
        `exactly one span "${name}"`,
      ).toEqual([name]);
      return found[0]!;
    };
    const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
    const id = (span: ReadableSpan) => span.spanContext().spanId;

    const proxy = one("proxy signed upload");
    const bridge = one("POST /internal/v1/bridge/submissions");
    const insert = spans.find(
      (span) =>
        span.name === "db insert" &&
        String(span.attributes["db.query.text"]).includes("traced_submissions"),
    );
    const enqueue = spans.find(
      (span) =>
        span.name === "db insert" && String(span.attributes["db.query.text"]).includes("sdk_jobs"),
    );
    const job = one("job traced-work");
    const client = one("broker run");
    const brokerRoute = one("POST /v1/docker/run");
    const workload = one("broker run workload");

    // One trace from the upload to the container.
    const traceId = proxy.spanContext().traceId;
    for (const span of [bridge, insert!, enqueue!, job, client, brokerRoute, workload])
      expect([span.name, span.spanContext().traceId]).toEqual([span.name, traceId]);
    // Each hop the child of the one before.
    expect(parentOf(proxy)).toBeUndefined();
    expect(proxy.attributes["platform.challenge.slug"]).toBe("traced");
    expect(parentOf(bridge)).toBe(id(proxy));
    expect(parentOf(insert!)).toBe(id(bridge));
    expect(parentOf(enqueue!)).toBe(id(bridge));
    expect(parentOf(job)).toBe(id(bridge));
    expect(parentOf(client)).toBe(id(job));
    expect(parentOf(brokerRoute)).toBe(id(client));
    expect(parentOf(workload)).toBe(id(brokerRoute));
    expect(workload.attributes).toMatchObject({
      "platform.challenge.slug": "traced",
      "container.image.name": IMAGES.busybox,
    });
    // The handler's log line names its span; no line of the challenge is anything but JSON.
    const stored = lines
      .map((line) => line.trim())
      .find((line) => line.includes("submission stored"));
    expect(JSON.parse(stored!)).toMatchObject({ trace_id: traceId, span_id: id(bridge) });
  });
});
