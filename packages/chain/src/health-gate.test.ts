import type { WeightsSource } from "@platform/core";
import { describe, expect, it } from "vitest";
import {
  collectionHealth,
  type GateSnapshot,
  HealthGateError,
  historyHealthGate,
  observingHealthGate,
} from "./health-gate.js";

const source = (
  slug: string,
  status: WeightsSource["status"],
  emission = 50,
  error: string | null = status === "failed" ? `${slug} timed out` : null,
): WeightsSource => ({
  slug,
  emission_percent: emission,
  status,
  epoch: null,
  hotkeys: status === "ok" ? 3 : 0,
  share: status === "ok" ? 0.5 : 0,
  error,
});

/** Snapshots newest first, one per collection: `rows[i]` lists each challenge's status. */
const history = (...rows: WeightsSource[][]): GateSnapshot[] =>
  rows.map((sources, i) => ({ id: 100 - i, sources }));

describe("collectionHealth", () => {
  it("stays open through the grace (3 failed collections) and closes on the 4th, naming the challenge", () => {
    const failing = (n: number) =>
      history(
        ...Array.from({ length: 6 }, (_, i) => [
          source("scoring", i < n ? "failed" : "ok"),
          source("agent-eval", "ok"),
        ]),
      );
    expect(collectionHealth(failing(0))).toEqual({ ok: true });
    expect(collectionHealth(failing(3))).toEqual({ ok: true });
    expect(collectionHealth(failing(4))).toEqual({
      ok: false,
      challenge: "scoring",
      failures: 4,
      graceCollections: 3,
      error: "scoring timed out",
      failing: [{ slug: "scoring", emissionPercent: 50, failures: 4, error: "scoring timed out" }],
    });
    expect(collectionHealth(failing(4), { graceCollections: 4 })).toEqual({ ok: true });
    expect(collectionHealth(failing(1), { graceCollections: 0 })).toMatchObject({
      ok: false,
      failures: 1,
    });
  });

  it("counts only consecutive failures from the newest collection", () => {
    const snapshots = history(
      [source("scoring", "failed")],
      [source("scoring", "failed")],
      [source("scoring", "ok")],
      [source("scoring", "failed")],
      [source("scoring", "failed")],
    );
    expect(collectionHealth(snapshots, { graceCollections: 1 })).toMatchObject({ failures: 2 });
    expect(collectionHealth(snapshots, { graceCollections: 2 })).toEqual({ ok: true });
    // Recovered in the newest collection: open, whatever came before.
    expect(
      collectionHealth([{ id: 101, sources: [source("scoring", "ok")] }, ...snapshots]),
    ).toEqual({ ok: true });
  });

  it("ignores challenges without emission, empty replies, and challenges no longer active", () => {
    const zero = history(...Array.from({ length: 5 }, () => [source("idle", "failed", 0)]));
    expect(collectionHealth(zero)).toEqual({ ok: true });
    const empty = history(...Array.from({ length: 5 }, () => [source("quiet", "empty")]));
    expect(collectionHealth(empty)).toEqual({ ok: true });
    // Retired before the newest collection: not in its sources, so not judged.
    const retired = history(
      [source("other", "ok")],
      ...Array.from({ length: 5 }, () => [source("gone", "failed")]),
    );
    expect(collectionHealth(retired)).toEqual({ ok: true });
    // A challenge that was absent from older snapshots counts only while it is listed.
    const added = history(...Array.from({ length: 4 }, () => [source("new", "failed")]), [
      source("other", "ok"),
    ]);
    expect(collectionHealth(added)).toMatchObject({ ok: false, failures: 4 });
    expect(collectionHealth([])).toEqual({ ok: true });
  });

  it("names the challenge failing longest first, and lists every one past the grace", () => {
    const snapshots = history(
      ...Array.from({ length: 6 }, (_, i) => [
        source("a", i < 4 ? "failed" : "ok", 10),
        source("b", "failed", 20),
        source("c", "ok", 70),
      ]),
    );
    const verdict = collectionHealth(snapshots);
    expect(verdict).toMatchObject({ ok: false, challenge: "b", failures: 6 });
    if (verdict.ok) throw new Error("open");
    expect(verdict.failing.map((f) => [f.slug, f.failures])).toEqual([
      ["b", 6],
      ["a", 4],
    ]);
    const error = new HealthGateError(7, verdict);
    expect(error).toMatchObject({ check: "HealthGate", netuid: 7, name: "HealthGateError" });
    expect(error.message).toMatch(
      /^HealthGate: challenge b failed its last 6 weights collections \(grace 3; last error: b timed out\)/,
    );
  });

  it("refuses a grace that is not a whole number", () => {
    expect(() => collectionHealth([], { graceCollections: -1 })).toThrow(RangeError);
    expect(() => historyHealthGate({ history: async () => [], graceCollections: 1.5 })).toThrow(
      RangeError,
    );
  });
});

describe("health gates", () => {
  it("historyHealthGate reads the newest grace + 1 snapshots each time", async () => {
    const limits: number[] = [];
    let failing = false;
    const gate = historyHealthGate({
      graceCollections: 2,
      history: async (limit) => {
        limits.push(limit);
        return history(
          ...Array.from({ length: limit }, () => [source("s", failing ? "failed" : "ok")]),
        );
      },
    });
    expect(await gate()).toEqual({ ok: true });
    failing = true;
    expect(await gate()).toMatchObject({ ok: false, challenge: "s", failures: 3 });
    expect(limits).toEqual([3, 3]);
  });

  it("observingHealthGate judges the distinct snapshots it was shown", async () => {
    const { gate, observe } = observingHealthGate({ graceCollections: 1 });
    const failed = (id: number) => ({ id, sources: [source("s", "failed")] });
    expect(await gate()).toEqual({ ok: true });
    expect(observe(failed(1))).toEqual(failed(1));
    observe(failed(1)); // the same snapshot fetched twice is one collection
    expect(await gate()).toEqual({ ok: true });
    observe(failed(2));
    expect(await gate()).toMatchObject({ ok: false, failures: 2 });
    observe({ id: 3, sources: [source("s", "ok")] });
    expect(await gate()).toEqual({ ok: true });
  });
});
