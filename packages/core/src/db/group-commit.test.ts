import { describe, expect, it } from "vitest";
import { groupCommit } from "./group-commit.js";

/** A flush that records its batches and resolves when the test says. */
function recordingFlush() {
  const batches: number[][] = [];
  const releases: (() => void)[] = [];
  const flush = (items: readonly number[]) => {
    batches.push([...items]);
    return new Promise<number[]>((resolve) => {
      releases.push(() => resolve(items.map((n) => n * 10)));
    });
  };
  return { batches, releases, flush };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("groupCommit", () => {
  it("flushes the first call at once and alone, then everything that queued behind it together", async () => {
    const { batches, releases, flush } = recordingFlush();
    const call = groupCommit(flush);
    const first = call(1);
    expect(batches).toEqual([[1]]); // no timer: the idle writer flushes in the same tick
    const rest = [call(2), call(3), call(4)];
    await tick();
    expect(batches).toEqual([[1]]); // flushes never overlap
    releases[0]!();
    expect(await first).toBe(10);
    await tick();
    expect(batches).toEqual([[1], [2, 3, 4]]);
    releases[1]!();
    expect(await Promise.all(rest)).toEqual([20, 30, 40]);
  });

  it("caps a batch at maxBatch and flushes the rest next", async () => {
    const { batches, releases, flush } = recordingFlush();
    const call = groupCommit(flush, { maxBatch: 2 });
    const all = [call(1), call(2), call(3), call(4), call(5)];
    for (let i = 0; i < 3; i++) {
      await tick();
      releases[i]!();
    }
    expect(await Promise.all(all)).toEqual([10, 20, 30, 40, 50]);
    expect(batches).toEqual([[1], [2, 3], [4, 5]]);
  });

  it("rejects every call of a failed batch with its error, and goes on with the next", async () => {
    let fail = true;
    const call = groupCommit(async (items: readonly number[]) => {
      await tick();
      if (fail) {
        fail = false;
        throw new Error("database down");
      }
      return items.map((n) => n + 1);
    });
    const first = call(1);
    const queued = [call(2), call(3)];
    await expect(first).rejects.toThrow("database down");
    expect(await Promise.all(queued)).toEqual([3, 4]);
  });

  it("rejects a batch whose flush returns the wrong number of results", async () => {
    const call = groupCommit(async (items: readonly number[]) => items.slice(1));
    await expect(call(1)).rejects.toThrow("0 results for 1 items");
  });
});
