import { describe, expect, it } from "vitest";
import { IN_USE_RETRY, retryWhileInUse } from "./in-use-retry.js";

/** What dockerode rejects with when the engine answers 409 (the shape `dockerStatus` reads). */
const inUse = () =>
  Object.assign(new Error("(HTTP code 409) volume is in use"), { statusCode: 409 });
const fast = { attempts: 4, delayMs: () => 1 };

describe("retryWhileInUse", () => {
  it("is the one policy: 10 attempts, 100 ms more apart each time, 5.5 s in all", () => {
    expect(IN_USE_RETRY.attempts).toBe(10);
    const waits = Array.from({ length: IN_USE_RETRY.attempts - 1 }, (_, i) =>
      IN_USE_RETRY.delayMs(i),
    );
    expect(waits.slice(0, 3)).toEqual([100, 200, 300]);
    expect(waits.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(5_500);
  });

  it("retries while Docker answers 409 and succeeds when the object is free", async () => {
    let calls = 0;
    const done = await retryWhileInUse(async () => {
      if (++calls < 3) throw inUse();
    }, fast);
    expect(done).toBe(true);
    expect(calls).toBe(3);
  });

  it("gives up after the last attempt without throwing, and never waits after it", async () => {
    let calls = 0;
    // The waits it asked for, by attempt: one after each failed attempt but the last (a wait
    // after the last would only delay the answer). Counted, not timed: a loaded machine cannot
    // make this flaky.
    const waits: number[] = [];
    const done = await retryWhileInUse(
      async () => {
        calls++;
        throw inUse();
      },
      {
        attempts: 3,
        delayMs: (attempt) => {
          waits.push(attempt);
          return 1;
        },
      },
    );
    expect(done).toBe(false);
    expect(calls).toBe(3);
    expect(waits).toEqual([0, 1]);
  });

  it("throws anything that is not 409 at once", async () => {
    let calls = 0;
    const failing = retryWhileInUse(async () => {
      calls++;
      throw Object.assign(new Error("engine down"), { statusCode: 500 });
    }, fast);
    await expect(failing).rejects.toThrow("engine down");
    expect(calls).toBe(1);
  });
});
