// Tracing ON for this whole file (startTracing decides once per process): the app kit's server
// spans continue a caller's traceparent, log lines carry the active span's ids, and a traced
// database client makes one span per query under the active one.
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../db/open-database.js";
import { createApp } from "../http/app.js";
import { createLogger } from "../http/logger.js";
import { traceSql } from "./traced-sql.js";
import {
  injectTraceHeaders,
  requestTraceContext,
  startTracing,
  type TraceContext,
  type Tracing,
  tracingEnabled,
  withSpan,
} from "./tracing.js";

const exporter = new InMemorySpanExporter();
let tracing: Tracing;

beforeAll(async () => {
  tracing = await startTracing({
    serviceName: "core-tracing-test",
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
});
afterAll(() => tracing.shutdown());

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID = "00f067aa0ba902b7";
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
// SimpleSpanProcessor exports once the resource's detected attributes are in: flush first.
const finished = async () => {
  await tracing.flush();
  return exporter.getFinishedSpans();
};
const byName = async (name: string) => (await finished()).filter((span) => span.name === name);

describe("tracing on", () => {
  it("is on, once, whatever a later call asks", async () => {
    expect(tracing.enabled).toBe(true);
    expect(tracingEnabled()).toBe(true);
    expect(await startTracing({ serviceName: "other", env: {} })).toBe(tracing);
  });

  it("makes a server span per request, continuing the caller's traceparent, named by the route template", async () => {
    await tracing.flush();
    exporter.reset();
    const lines: string[] = [];
    let forwarded: Record<string, string> = {};
    const app = createApp({
      name: "traced",
      version: "1",
      logger: createLogger({ name: "traced", write: (line) => lines.push(line) }),
    });
    app.route({
      method: "GET",
      path: "/items/:id",
      handler: ({ log }) => {
        log.info("handling");
        forwarded = {};
        injectTraceHeaders(forwarded);
        return { ok: true };
      },
    });
    const response = await app.fetch(
      new Request("http://x/items/42?token=abc", {
        headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` },
      }),
    );
    expect(response.status).toBe(200);
    const [span] = await byName("GET /items/:id");
    expect(span).toBeDefined();
    expect(span!.spanContext().traceId).toBe(TRACE_ID);
    expect(parentOf(span!)).toBe(PARENT_ID);
    expect(span!.attributes).toMatchObject({
      "http.route": "/items/:id",
      "http.response.status_code": 200,
      "url.path": "/items/42",
    });
    // The query (which may carry anything a client sent) is never recorded.
    expect(JSON.stringify(span!.attributes)).not.toContain("token=abc");
    // A log line inside the span names it; a call onward continues it.
    const line = JSON.parse(lines.find((l) => l.includes("handling"))!);
    expect(line).toMatchObject({ trace_id: TRACE_ID, span_id: span!.spanContext().spanId });
    expect(forwarded["traceparent"]).toBe(`00-${TRACE_ID}-${span!.spanContext().spanId}-01`);
  });

  it("names an unmatched request by its method and fails the span of a 5xx", async () => {
    await tracing.flush();
    exporter.reset();
    const app = createApp({
      name: "t",
      version: "1",
      logger: createLogger({ name: "t", level: "silent" }),
    });
    app.route({
      method: "GET",
      path: "/boom",
      handler: () => {
        throw new Error("kaput");
      },
    });
    await app.fetch(new Request("http://x/nothing/here"));
    await app.fetch(new Request("http://x/boom"));
    expect(await byName("GET")).toHaveLength(1);
    const [boom] = await byName("GET /boom");
    expect(boom!.status.code).toBe(2); // ERROR
  });

  it("hands withSpan's callback its span's context, and a request's to requestTraceContext, for explicit parents", async () => {
    await tracing.flush();
    exporter.reset();
    let handed: TraceContext | undefined;
    let outside: TraceContext | undefined;
    const app = createApp({
      name: "explicit",
      version: "1",
      logger: createLogger({ name: "explicit", level: "silent" }),
    });
    app.route({
      method: "GET",
      path: "/work",
      handler: async ({ request }) => {
        outside = requestTraceContext(request);
        return { ok: true };
      },
    });
    await withSpan("collection", async (trace) => {
      handed = trace;
    });
    await app.fetch(new Request("http://x/work"));
    const [collection] = await byName("collection");
    const [request] = await byName("GET /work");
    // Written from the handed contexts, wherever the code runs by then.
    const fromCollection: Record<string, string> = {};
    const fromRequest: Record<string, string> = {};
    injectTraceHeaders(fromCollection, handed);
    injectTraceHeaders(fromRequest, outside);
    const { traceId, spanId } = collection!.spanContext();
    expect(fromCollection["traceparent"]).toBe(`00-${traceId}-${spanId}-01`);
    expect(fromRequest["traceparent"]).toBe(
      `00-${request!.spanContext().traceId}-${request!.spanContext().spanId}-01`,
    );
    // Outside any span there is nothing to continue, and nothing is written.
    const none: Record<string, string> = {};
    injectTraceHeaders(none);
    expect(none).toEqual({});
    expect(requestTraceContext(new Request("http://x/never-served"))).toBeUndefined();
  });

  it("a log line outside any span carries no trace ids", () => {
    const lines: string[] = [];
    createLogger({ name: "x", write: (line) => lines.push(line) }).info("idle");
    expect(JSON.parse(lines[0]!)).not.toHaveProperty("trace_id");
  });

  it("traceSql makes one span per query under the active span, and one per transaction", async () => {
    await tracing.flush();
    exporter.reset();
    const db = await openDatabase({ memory: true, env: {} });
    try {
      const sql = traceSql(db.sql);
      expect(traceSql(sql)).toBe(sql);
      // Outside any span (a background loop's polls): no trace of its own.
      await sql`create table t (id int primary key, secret text)`;
      await sql.begin((tx) => tx`select 1`);
      expect((await finished()).filter((span) => span.name.startsWith("db "))).toEqual([]);
      await tracing.flush();
      exporter.reset();
      await withSpan("handler", async () => {
        await sql`insert into t ${sql({ id: 1, secret: "do-not-record" })}`;
        await sql.begin(async (tx) => {
          await tx`update t set secret = ${"also-secret"} where id = ${1}`;
          await tx`select * from t where id = ${1} and ${sql`true`}`;
        });
      });
      const [handler] = await byName("handler");
      const [insert] = await byName("db insert");
      const [transaction] = await byName("db transaction");
      const [update] = await byName("db update");
      const [select] = await byName("db select");
      expect(parentOf(insert!)).toBe(handler!.spanContext().spanId);
      expect(parentOf(transaction!)).toBe(handler!.spanContext().spanId);
      expect(parentOf(update!)).toBe(transaction!.spanContext().spanId);
      expect(parentOf(select!)).toBe(transaction!.spanContext().spanId);
      expect(update!.attributes["db.query.text"]).toBe("update t set secret = $1 where id = $2");
      // Parameters never reach a span; the embedded fragment made none of its own.
      expect(JSON.stringify((await finished()).map((s) => s.attributes))).not.toMatch(
        /do-not-record|also-secret/,
      );
      expect(await finished()).toHaveLength(5);
      // A failing query fails its span and still rejects as before.
      await withSpan("failing", () =>
        expect(sql`select * from missing_table`).rejects.toThrow(/missing_table/),
      );
      expect((await byName("db select")).at(-1)!.status.code).toBe(2);
    } finally {
      await db.close();
    }
  });
});
