// The proxy decides sampling before it makes a span (core's head-sampling.ts): a request nobody
// samples makes no span and tells the challenge so; a sampled caller's trace is continued. Tracing
// is on for this file with `parentbased_always_off`: new traces are never sampled, a caller's
// sampled flag is followed. Real sockets: a client -> the master's public listener (the native
// passthrough) -> a stand-in challenge that records the headers it got.
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { startTracing, type Tracing } from "@platform/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EchoUpstream, rawRequest, startEchoUpstream } from "../proxy/echo-upstream.js";
import { registerChallenge } from "../proxy/register-challenge.js";
import { startTestMaster, type TestMaster } from "../test-master.js";

const exporter = new InMemorySpanExporter();
// Before the master starts: it finds tracing on, with this sampler.
const tracing: Tracing = await startTracing({
  serviceName: "proxy-head-sampling-test",
  env: { OTEL_TRACES_SAMPLER: "parentbased_always_off" },
  spanProcessors: [new SimpleSpanProcessor(exporter)],
});

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID = "00f067aa0ba902b7";
const UNSAMPLED = /^00-([\da-f]{32})-([\da-f]{16})-00$/;

describe("the proxy's head sampling", () => {
  let t: TestMaster;
  let up: EchoUpstream;
  let publicUrl: string;
  let n = 0;

  beforeAll(async () => {
    up = await startEchoUpstream();
    t = await startTestMaster("pglite");
    publicUrl = (await t.listen()).url;
    await registerChallenge(t, "traced", "active", up.url);
  });
  afterAll(async () => {
    await t?.close();
    await up?.close();
    await tracing.shutdown();
  });

  /** Proxy one request with `headers`; what the challenge got, and the proxy spans made. */
  async function proxied(headers: Record<string, string>) {
    await tracing.flush();
    exporter.reset();
    const path = `/items/${++n}`;
    const answer = await rawRequest(publicUrl, { path: `/challenges/traced${path}`, headers });
    expect(answer.status).toBe(200);
    const [seen] = up.seenAt(path);
    await tracing.flush();
    const spans = exporter.getFinishedSpans().filter((span) => span.name === "proxy");
    return { got: seen!.headers, spans };
  }

  it("makes no span for a new trace it does not sample, and forwards that decision", async () => {
    const first = await proxied({});
    const second = await proxied({});
    expect(first.spans).toEqual([]);
    expect(second.spans).toEqual([]);
    const [a] = first.got["traceparent"] ?? [];
    const [b] = second.got["traceparent"] ?? [];
    // One traceparent each, not sampled, a new trace every time.
    expect(first.got["traceparent"]).toHaveLength(1);
    expect(a).toMatch(UNSAMPLED);
    expect(b).toMatch(UNSAMPLED);
    expect(UNSAMPLED.exec(a!)![1]).not.toBe(UNSAMPLED.exec(b!)![1]);
  });

  it("passes a caller's unsampled traceparent unchanged and makes no span", async () => {
    const traceparent = `00-${TRACE_ID}-${PARENT_ID}-00`;
    const { got, spans } = await proxied({ traceparent, tracestate: "vendor=1" });
    expect(spans).toEqual([]);
    expect(got["traceparent"]).toEqual([traceparent]);
    expect(got["tracestate"]).toEqual(["vendor=1"]);
  });

  it("continues a caller's sampled trace: one proxy span, the challenge its child", async () => {
    const { got, spans } = await proxied({
      traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`,
      tracestate: "vendor=1",
    });
    expect(spans).toHaveLength(1);
    const span = spans[0] as ReadableSpan;
    expect(span.spanContext().traceId).toBe(TRACE_ID);
    expect(span.parentSpanContext?.spanId).toBe(PARENT_ID);
    expect(span.attributes["platform.challenge.slug"]).toBe("traced");
    expect(span.attributes["http.response.status_code"]).toBe(200);
    // The challenge continues the proxy's span, not the caller's, with the caller's state.
    expect(got["traceparent"]).toEqual([`00-${TRACE_ID}-${span.spanContext().spanId}-01`]);
    expect(got["tracestate"]).toEqual(["vendor=1"]);
  });

  it("treats a malformed traceparent as none: a new trace, not sampled, the bad value not passed on", async () => {
    const { got, spans } = await proxied({ traceparent: `00-${TRACE_ID}-${PARENT_ID}-01-junk` });
    expect(spans).toEqual([]);
    expect(got["traceparent"]).toHaveLength(1);
    expect(got["traceparent"]![0]).toMatch(UNSAMPLED);
    expect(got["traceparent"]![0]).not.toContain(TRACE_ID);
  });
});
