// Tracing OFF (no OTLP endpoint, the default): every helper is a pass-through.
import { describe, expect, it } from "vitest";
import { createApp } from "../http/app.js";
import { createLogger } from "../http/logger.js";
import {
  activeTraceIds,
  activeTraceparent,
  injectTraceHeaders,
  startTracing,
  tracingEnabled,
  tracingRequested,
  withSpan,
} from "./tracing.js";

describe("tracing off", () => {
  it("stays off without an OTLP endpoint, and turns on only for one", async () => {
    expect(tracingRequested({})).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toBe(true);
    expect(
      tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c:4318/v1/traces" }),
    ).toBe(true);
    expect(
      tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: "true" }),
    ).toBe(false);
    expect(
      tracingRequested({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
        OTEL_TRACES_EXPORTER: "none",
      }),
    ).toBe(false);
    const tracing = await startTracing({ serviceName: "off", env: {} });
    expect(tracing.enabled).toBe(false);
    expect(tracingEnabled()).toBe(false);
  });

  it("injects nothing, names no span in logs, and runs withSpan's function as is", async () => {
    const headers: Record<string, string> = {};
    injectTraceHeaders(headers);
    expect(headers).toEqual({});
    expect(activeTraceparent()).toBeNull();
    expect(activeTraceIds()).toBeUndefined();
    expect(withSpan("x", () => 7)).toBe(7);
    await expect(withSpan("y", async () => 8)).resolves.toBe(8);
    const lines: string[] = [];
    const app = createApp({
      name: "t",
      version: "1",
      logger: createLogger({ name: "t", write: (line) => lines.push(line) }),
    });
    app.route({
      method: "GET",
      path: "/x",
      handler: ({ log }) => {
        log.info("hello");
        return {};
      },
    });
    const response = await app.fetch(
      new Request("http://h/x", {
        headers: { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" },
      }),
    );
    expect(response.status).toBe(200);
    expect(JSON.parse(lines[0]!)).not.toHaveProperty("trace_id");
  });

  it("the observer sees route templates, never raw paths", async () => {
    const seen: (string | undefined)[] = [];
    const app = createApp({
      name: "t",
      version: "1",
      logger: createLogger({ name: "t", level: "silent" }),
      observe: ({ route, status }) => seen.push(`${route ?? "(none)"} ${status}`),
    });
    app.route({ method: "GET", path: "/items/:id", handler: () => ({}) });
    await app.fetch(new Request("http://h/items/1"));
    await app.fetch(new Request("http://h/items/2"));
    await app.fetch(new Request("http://h/nope/3"));
    expect(seen).toEqual(["/items/:id 200", "/items/:id 200", "(none) 404"]);
  });
});
