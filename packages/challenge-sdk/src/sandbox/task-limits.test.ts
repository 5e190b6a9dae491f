import { describe, expect, it } from "vitest";
import { SandboxRefusal } from "./sandbox-refusal.js";
import { HARDENED_LIMITS, resolveTaskLimits } from "./task-limits.js";

const defaults = resolveTaskLimits(undefined);

/** The code of the SandboxRefusal `run` throws (fails the test if it throws anything else). */
function codeOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(SandboxRefusal);
    return (error as SandboxRefusal).code;
  }
  throw new Error("expected a SandboxRefusal");
}

describe("resolveTaskLimits", () => {
  it("defaults CPU, memory and pids to the maximum and lets a task lower them", () => {
    expect(defaults).toEqual({
      cpus: 2,
      memoryBytes: 4 * 1024 ** 3,
      pids: 512,
      tmpfsBytes: 256 * 1024 ** 2,
      outputBytes: 1024 ** 2,
    });
    expect(
      resolveTaskLimits({
        cpus: 0.5,
        memory_mb: 256,
        pids: 64,
        tmpfs_mb: 1024,
        output_bytes: 4096,
      }),
    ).toEqual({
      cpus: 0.5,
      memoryBytes: 256 * 1024 ** 2,
      pids: 64,
      tmpfsBytes: 1024 * 1024 ** 2,
      outputBytes: 4096,
    });
  });

  it("refuses raising any limit above its maximum (never clamps)", () => {
    expect(codeOf(() => resolveTaskLimits({ cpus: 2.5 }))).toBe("limit_exceeded");
    expect(codeOf(() => resolveTaskLimits({ memory_mb: 4097 }))).toBe("limit_exceeded");
    expect(codeOf(() => resolveTaskLimits({ pids: 513 }))).toBe("limit_exceeded");
    expect(codeOf(() => resolveTaskLimits({ tmpfs_mb: 2049 }))).toBe("limit_exceeded");
    expect(codeOf(() => resolveTaskLimits({ output_bytes: 16 * 1024 * 1024 + 1 }))).toBe(
      "limit_exceeded",
    );
    expect(codeOf(() => resolveTaskLimits({ cpus: 1 }, { ...HARDENED_LIMITS, cpus: 0.5 }))).toBe(
      "limit_exceeded",
    );
  });
});
