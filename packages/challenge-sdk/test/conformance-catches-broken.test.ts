// The conformance suite proves itself: a conforming challenge passes every check, and each
// deliberately broken one fails exactly the checks its breach concerns (no more, so a check
// that fails for an unrelated reason cannot pass for "catching" it).
import {
  type ConformanceCheckId,
  type ConformanceReport,
  checkChallengeConformance,
  testBackends,
} from "@platform/challenge-sdk/testing";
import { describe, expect, it } from "vitest";
import { CONFORMANCE_CHECKS } from "../src/testing/_conformance-checks.js";
import { BROKEN_CASES, conformingChallenge } from "./broken-challenges.js";

// One backend is enough to judge the suite (the example's conformance test runs on both);
// PostgreSQL when it answers, as it creates a fresh database faster than PGlite starts.
const [backend] = await testBackends();
const options = { backends: [backend!] };

const failedChecks = (report: ConformanceReport) =>
  report.results.filter((r) => r.status === "failed").map((r) => r.check);

const explain = (report: ConformanceReport) =>
  report.results
    .filter((r) => r.status !== "passed")
    .map((r) => `${r.check} ${r.status}: ${r.message}`)
    .join("\n");

describe("the conformance suite", () => {
  it("passes a conforming challenge on every check, skipping none", async () => {
    const report = await checkChallengeConformance(conformingChallenge(), options);
    expect(report.ok, explain(report)).toBe(true);
    expect(report.results.map((r) => [r.check, r.status])).toEqual(
      CONFORMANCE_CHECKS.map((check) => [check.id, "passed"]),
    );
  });

  it.each(BROKEN_CASES)("fails $name", async ({ subject, fails }) => {
    const report = await checkChallengeConformance(subject, options);
    expect(report.ok).toBe(false);
    expect(failedChecks(report).sort(), explain(report)).toEqual([...fails].sort());
    for (const result of report.results.filter((r) => r.status === "failed")) {
      expect(result.message, result.check).toBeTruthy();
      expect(result.backend).toBe(backend);
    }
  });

  it("has a broken challenge for every check it claims to make", () => {
    const caught = new Set<ConformanceCheckId>(BROKEN_CASES.flatMap((c) => c.fails));
    const claimed: ConformanceCheckId[] = ["start", ...CONFORMANCE_CHECKS.map((c) => c.id)];
    expect(claimed.filter((id) => !caught.has(id))).toEqual([]);
  });

  it("skips the signed checks, not fails them, for a challenge with no signed route", async () => {
    const report = await checkChallengeConformance(
      {
        challenge: conformingChallenge({ submit: "accept-anything" }),
        invalidRequest: { method: "GET", path: "/v1/items?limit=11" },
      },
      options,
    );
    expect(report.ok, explain(report)).toBe(true);
    const skipped = report.results.filter((r) => r.status === "skipped");
    expect(skipped.map((r) => r.check)).toEqual([
      "signed-unsigned",
      "signed-replay",
      "signed-tampered",
    ]);
    expect(skipped[0]!.message).toMatch(/signedRequests/);
  });
});
