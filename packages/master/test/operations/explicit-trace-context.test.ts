// The master traces with an explicit context (startTracing({ context: "explicit" }), as
// createMaster asks): no AsyncLocalStorage, so a span is active only for its synchronous call,
// and every place where the master's trace crosses an await passes its parent on by hand. Each
// such place is checked here, on real sockets, with tracing on for this file: the kit's
// passthrough, a weights collection's requests, and the broker's run (Docker) inside its request.

import { context } from "@opentelemetry/api";
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { startTracing, type Tracing } from "@platform/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  brokerTestConfig,
  createChallenge,
  dockerForTests,
  IMAGES,
} from "../broker/docker-test-env.js";
import { type EchoUpstream, startEchoUpstream } from "../proxy/echo-upstream.js";
import { registerChallenge } from "../proxy/register-challenge.js";
import { jsonInit, startTestMaster, type TestMaster } from "../test-master.js";

const exporter = new InMemorySpanExporter();
// Before the master starts: it finds tracing on, explicit, every trace sampled.
const tracing: Tracing = await startTracing({
  serviceName: "explicit-trace-context-test",
  env: { OTEL_TRACES_SAMPLER: "parentbased_always_on" },
  spanProcessors: [new SimpleSpanProcessor(exporter)],
  context: "explicit",
});
const docker = await dockerForTests();

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_ID = "00f067aa0ba902b7";
const CALLER = `00-${TRACE_ID}-${CALLER_ID}-01`;
const id = (span: ReadableSpan) => span.spanContext().spanId;
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe("the master's explicit trace context", () => {
  let t: TestMaster;
  let up: EchoUpstream;
  let adminUrl: string;

  beforeAll(async () => {
    up = await startEchoUpstream();
    t = await startTestMaster("pglite", docker ? brokerTestConfig("engine") : undefined);
    adminUrl = (await t.listen()).admin.url;
    await registerChallenge(t, "traced", "active", up.url);
  });
  afterAll(async () => {
    await t?.close();
    await up?.close();
    await tracing.shutdown();
  });

  async function spans(): Promise<ReadableSpan[]> {
    await tracing.flush();
    return exporter.getFinishedSpans();
  }
  async function reset(): Promise<void> {
    await tracing.flush();
    exporter.reset();
  }

  it("runs without AsyncLocalStorage: a span's context ends with its synchronous call", async () => {
    const manager = (context as unknown as { _getContextManager(): object })._getContextManager();
    expect(manager.constructor.name).toBe("SynchronousContextManager");
  });

  it("continues the kit's span in a passthrough forwarded after an await", async () => {
    await reset();
    const answer = await t.publicFetch("/challenges/traced/kit-path", {
      headers: { traceparent: CALLER },
    });
    expect(answer.status).toBe(200);
    const [seen] = up.seenAt("/kit-path");
    const server = (await spans()).find((span) => span.kind === 1 && parentOf(span) === CALLER_ID);
    expect(server, "the kit's server span, child of the caller").toBeDefined();
    expect(server!.spanContext().traceId).toBe(TRACE_ID);
    expect(seen!.headers["traceparent"]).toEqual([`00-${TRACE_ID}-${id(server!)}-01`]);
  });

  it("hands a weights collection's trace to each challenge's get_weights", async () => {
    await reset();
    const collected = await t.fetch("/v1/admin/weights/collect", {
      method: "POST",
      headers: t.admin,
    });
    expect(collected.status).toBe(200);
    const [request] = up.seenAt("/internal/v1/get_weights");
    const collection = (await spans()).find((span) => span.name === "weights collection");
    expect(collection).toBeDefined();
    const { traceId, spanId } = collection!.spanContext();
    expect(request!.headers["traceparent"]).toEqual([`00-${traceId}-${spanId}-01`]);
  });

  it.skipIf(!docker)(
    "makes the broker's run a child of its request, across the request's awaits",
    async () => {
      const challenge = await createChallenge(t, "broker-traced");
      await reset();
      const res = await fetch(
        `${adminUrl}/v1/docker/run`,
        jsonInit(
          "POST",
          { job_id: "traced", image: IMAGES.busybox, command: ["true"], timeout_seconds: 60 },
          { ...challenge.headers, traceparent: CALLER },
        ),
      );
      expect(res.status).toBe(200);
      const all = await spans();
      const route = all.find((span) => span.name === "POST /v1/docker/run");
      const workload = all.find((span) => span.name === "broker run workload");
      expect(parentOf(route!)).toBe(CALLER_ID);
      expect(parentOf(workload!)).toBe(id(route!));
      expect(workload!.spanContext().traceId).toBe(TRACE_ID);
    },
  );
});
