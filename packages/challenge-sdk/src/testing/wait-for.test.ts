import { describe, expect, it } from "vitest";
import { waitFor } from "./wait-for.js";

describe("waitFor", () => {
  it("resolves to the condition's first truthy answer", async () => {
    let calls = 0;
    const answer = await waitFor(() => (++calls >= 3 ? { calls } : null), { intervalMs: 1 });
    expect(answer).toEqual({ calls: 3 });
  });

  it("throws after the timeout, naming what it waited for", async () => {
    const started = Date.now();
    await expect(
      waitFor(async () => false, { timeoutMs: 50, intervalMs: 5, what: "the job" }),
    ).rejects.toThrow("the job not met within 50 ms");
    expect(Date.now() - started).toBeGreaterThanOrEqual(50);
  });

  it("ends the wait at once when the condition throws", async () => {
    const started = Date.now();
    await expect(
      waitFor(
        () => {
          throw new Error("the worker died");
        },
        { timeoutMs: 10_000 },
      ),
    ).rejects.toThrow("the worker died");
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
