import { describe, expect, it } from "vitest";
import { HealthChecks, livenessResponse, readinessResponse } from "./health.js";

describe("HealthChecks", () => {
  it("is ready when every check passes, and names the failing ones otherwise", async () => {
    const health = new HealthChecks({ cacheMs: 0 });
    let databaseUp = true;
    health.register("database", () => {
      if (!databaseUp) throw new Error("connect ECONNREFUSED postgres://app:s3cret@db:5432/x");
    });
    health.register("docker", async () => {});
    expect(await health.run()).toMatchObject({ status: "ok", failing: [] });
    databaseUp = false;
    const report = await health.run();
    expect(report.status).toBe("unavailable");
    expect(report.failing).toEqual(["database"]);
    expect(report.checks["docker"]?.status).toBe("ok");
    // A reason never carries the credentials a driver put in its message.
    expect(report.checks["database"]?.error).toContain("[redacted]");
    expect(report.checks["database"]?.error).not.toContain("s3cret");
  });

  it("fails a check that does not answer within its timeout, and aborts its signal", async () => {
    const health = new HealthChecks({ cacheMs: 0 });
    let aborted = false;
    health.register(
      "chain",
      (signal) =>
        new Promise((resolve) => {
          signal.addEventListener("abort", () => {
            aborted = true;
            resolve(undefined);
          });
        }),
      { timeoutMs: 20 },
    );
    const report = await health.run();
    expect(report.failing).toEqual(["chain"]);
    expect(report.checks["chain"]?.error).toMatch(/did not answer within 20 ms/);
    expect(aborted).toBe(true);
  });

  it("leaves out excluded checks (?exclude=, as Kubernetes does)", async () => {
    const health = new HealthChecks({ cacheMs: 0 });
    health.register("database", () => {});
    health.register("docker", () => {
      throw new Error("no engine");
    });
    expect((await health.run()).status).toBe("unavailable");
    const report = await health.run({ exclude: ["docker"] });
    expect(report).toMatchObject({ status: "ok", failing: [] });
    expect(Object.keys(report.checks)).toEqual(["database"]);
  });

  it("shares one round between concurrent probes and reuses it for cacheMs", async () => {
    const health = new HealthChecks({ cacheMs: 60_000 });
    let calls = 0;
    health.register("database", async () => {
      calls++;
      await new Promise((resolve) => setTimeout(resolve, 5));
    });
    await Promise.all([health.run(), health.run(), health.run()]);
    await health.run();
    expect(calls).toBe(1);
  });

  it("refuses a bad or repeated name", () => {
    const health = new HealthChecks();
    health.register("database", () => {});
    expect(() => health.register("database", () => {})).toThrow(/already registered/);
    expect(() => health.register("Bad Name", () => {})).toThrow(TypeError);
  });
});

describe("readinessResponse", () => {
  const failing = {
    status: "unavailable" as const,
    failing: ["database"],
    checks: {
      database: {
        status: "failing" as const,
        duration_ms: 3,
        error: "connect ECONNREFUSED 10.0.0.7",
      },
    },
  };

  it("answers 503 naming the failing check, without the reason unless asked", async () => {
    const response = readinessResponse(failing);
    expect(response.status).toBe(503);
    const body = await response.json();
    expect(body).toEqual({
      status: "unavailable",
      failing: ["database"],
      checks: { database: { status: "failing", duration_ms: 3 } },
    });
    const detailed = await readinessResponse(failing, { detail: true }).json();
    expect(detailed.checks.database.error).toContain("ECONNREFUSED");
  });

  it("answers 200 when ready; /livez always answers 200", async () => {
    const ready = readinessResponse({ status: "ok", failing: [], checks: {} });
    expect(ready.status).toBe(200);
    expect(livenessResponse().status).toBe(200);
    expect(await livenessResponse().json()).toEqual({ status: "ok" });
  });
});
