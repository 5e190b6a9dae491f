import { HttpError } from "@platform/core";
import { describe, expect, it } from "vitest";
import {
  isBlockedProxyPath,
  plainProxySegment,
  proxySegmentKey,
  resolveProxyPath,
  splitProxyTarget,
} from "./proxy-contract-path.js";

// The master's proxy judges paths with these functions (packages/master/src/proxy keeps the
// tests of its target parsing and wire encoding); these pin the rule and the reading itself.

describe("isBlockedProxyPath, read as the proxy reads it", () => {
  it.each([
    "/health",
    "/health/ready",
    "/livez",
    "/readyz",
    "/readyz/database",
    "/metrics",
    "/metrics/x",
    "/version",
    "/internal",
    "/internal/v1/get_weights",
    "/benchmark-executions",
    "/benchmark-executions/42/logs",
    "/v1/benchmark-executions",
    "/benchmark_executions",
    "/benchmark/run",
    "/benchmarks/run",
    "/benchmarks/x/run",
    "/benchmarks/x/y/execute",
    "/v1/benchmarks/abc/launch",
    "/benchmark/x/launch/",
  ])("blocks %s", (path) => {
    expect(isBlockedProxyPath(path)).toBe(true);
  });

  it.each([
    "",
    "/",
    "/healthy",
    "/health-check",
    "/livezz",
    "/readyz-ui",
    "/v1/readyz",
    "/v1/metrics",
    "/metrics-board",
    "/versions",
    "/internals",
    "/internal-docs",
    "/v1/health/eval-jobs",
    "/v1/internal",
    "/benchmarks",
    "/benchmarks/x",
    "/benchmarks/x/results",
    "/benchmarks/run-history",
    "/benchmarks/x/run/logs",
    "/run",
    "/jobs/x/execute",
    "/submissions/abc/launch",
    "/benchmark-executionsx",
  ])("allows %s", (path) => {
    expect(isBlockedProxyPath(path)).toBe(false);
  });
});

describe("proxySegmentKey", () => {
  it("folds case, params, trailing dots and compatibility forms", () => {
    expect(proxySegmentKey("HeAlTh;x=1")).toBe("health");
    expect(proxySegmentKey("Ｉｎｔｅｒｎａｌ.")).toBe("internal");
    expect(proxySegmentKey("RUN;jsessionid=1")).toBe("run");
    expect(proxySegmentKey("benchmar\u212As")).toBe("benchmarks"); // Kelvin sign
    expect(proxySegmentKey("ver\u017Fion")).toBe("version"); // long s
  });
});

describe("resolveProxyPath", () => {
  it("decodes until stable, reads \\ as /, resolves dot segments and never climbs above root", () => {
    expect(resolveProxyPath("/a/%252e%252e/b\\c//d/").segments).toEqual(["b", "c", "d"]);
    expect(resolveProxyPath("/x/y/../../../z", 1)).toEqual({
      segments: ["x", "z"],
      trailingSlash: false,
    });
    expect(resolveProxyPath("/a/..;x/b/.").segments).toEqual(["b"]);
  });

  it.each(["/a%00", "/a%0d%0aX", "/\u0001", "/%c2%85", "/%ff"])(
    "refuses %j with 400 invalid_path",
    (raw) => {
      try {
        resolveProxyPath(raw);
        throw new Error("accepted");
      } catch (error) {
        expect(error).toBeInstanceOf(HttpError);
        expect((error as HttpError).status).toBe(400);
        expect((error as HttpError).code).toBe("invalid_path");
      }
    },
  );
});

describe("isBlockedProxyPath against encodings and spellings", () => {
  it.each([
    "/%69nternal/x",
    "/%2569nternal/x",
    "/v1/..%2f..%2finternal",
    "/v1\\..\\health",
    "/HEALTH;x=1",
    "/version.",
    "/Ｉｎｔｅｒｎａｌ/a",
    "/benchmar\u212As/x/RUN",
    "/benchmarks/x/run?then=1",
    "/a%00",
  ])("blocks %j", (path) => {
    expect(isBlockedProxyPath(path)).toBe(true);
  });
});

describe("plainProxySegment", () => {
  it.each([
    ["abc-123", "abc-123"],
    ["a%2520b", "a b"],
    ["550e8400-e29b-41d4-a716-446655440000", "550e8400-e29b-41d4-a716-446655440000"],
  ])("accepts %s", (raw, decoded) => {
    expect(plainProxySegment(raw)).toBe(decoded);
  });

  it.each([
    "",
    ".",
    "..",
    "%2e%2e",
    "%252e%252e",
    "..;x",
    "a/b",
    "a%2fb",
    "a%252fb",
    "a\\b",
    "a%5cb",
    "a%00",
    "\n",
    "%ff",
  ])("refuses %j", (raw) => {
    expect(plainProxySegment(raw)).toBeNull();
  });
});

describe("splitProxyTarget", () => {
  it("keeps the query verbatim and drops a fragment", () => {
    expect(splitProxyTarget("/a?x=%2F&y#z")).toEqual({ path: "/a", query: "?x=%2F&y" });
    expect(splitProxyTarget("/a#b?c")).toEqual({ path: "/a", query: "" });
  });
});
