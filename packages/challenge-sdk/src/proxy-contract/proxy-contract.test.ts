import { describe, expect, it } from "vitest";
import {
  isBlockedProxyPath,
  isInternalPath,
  isProxiedRequest,
  proxyPathPrefix,
} from "./proxy-contract.js";

describe("isBlockedProxyPath", () => {
  it.each([
    "/health",
    "/health/db",
    "/version",
    "/VERSION",
    "/internal",
    "/internal/v1/get_weights",
    "/Internal/v1/x",
    "/benchmark-executions",
    "/benchmark_executions/1",
    "/v1/benchmark-executions/1",
    "/benchmarks/x/run",
    "/v1/benchmark/launch",
    "/benchmarks/a/b/execute",
  ])("blocks %s", (path) => {
    expect(isBlockedProxyPath(path)).toBe(true);
  });

  it.each([
    "/",
    "/v1/submissions",
    "/v1/health-report",
    "/healthz",
    "/v1/internal",
    "/benchmarks",
    "/benchmarks/x",
    "/v1/run",
    "/benchmarks/:id/:action",
    "/v1/submissions/:id/launch",
  ])("lets %s through", (path) => {
    expect(isBlockedProxyPath(path)).toBe(false);
  });
});

describe("isInternalPath", () => {
  it("is true only for /internal and below", () => {
    expect(isInternalPath("/internal")).toBe(true);
    expect(isInternalPath("/internal/v1/x")).toBe(true);
    expect(isInternalPath("/internals")).toBe(false);
    expect(isInternalPath("/v1/internal")).toBe(false);
  });
});

describe("isProxiedRequest", () => {
  it("reads X-Platform-Proxy: true, case-insensitively", () => {
    expect(
      isProxiedRequest(new Request("http://x/", { headers: { "X-Platform-Proxy": "true" } })),
    ).toBe(true);
    expect(
      isProxiedRequest(new Request("http://x/", { headers: { "x-platform-proxy": " TRUE " } })),
    ).toBe(true);
    expect(
      isProxiedRequest(new Request("http://x/", { headers: { "x-platform-proxy": "1" } })),
    ).toBe(false);
    expect(isProxiedRequest(new Request("http://x/"))).toBe(false);
  });
});

describe("proxyPathPrefix", () => {
  it("is the master's public mount of a challenge", () => {
    expect(proxyPathPrefix("agent-eval")).toBe("/challenges/agent-eval");
  });
});
