import { describe, expect, it } from "vitest";
import { isBlockedPath } from "./blocked-paths.js";
import { parseProxyTarget } from "./proxy-path.js";

const blocked = (path: string) =>
  isBlockedPath(parseProxyTarget(`/challenges/live${path}`).segments);

describe("isBlockedPath", () => {
  it.each([
    "/health",
    "/health/ready",
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
    expect(blocked(path)).toBe(true);
  });

  it.each([
    "",
    "/",
    "/healthy",
    "/health-check",
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
    expect(blocked(path)).toBe(false);
  });
});
