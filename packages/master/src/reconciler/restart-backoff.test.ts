import { describe, expect, it } from "vitest";
import { restartDelaySeconds } from "./restart-backoff.js";

describe("restartDelaySeconds", () => {
  it("restarts at once the first time, then doubles from the base up to the cap", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7].map((n) => restartDelaySeconds(n, 5, 300))).toEqual([
      0, 5, 10, 20, 40, 80, 160, 300,
    ]);
    expect(restartDelaySeconds(10_000, 5, 300)).toBe(300);
  });
});
