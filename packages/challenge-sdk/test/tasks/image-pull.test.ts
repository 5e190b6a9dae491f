import { randomBytes } from "node:crypto";
import {
  ensureImage,
  type PullProgress,
  probeDocker,
  pullImage,
  pullProgress,
} from "@platform/challenge-sdk/sandbox";
import { isCi } from "@platform/core/testing";
import Docker from "dockerode";
import { describe, expect, it } from "vitest";

const docker = new Docker();
const probe = await probeDocker(docker);
if (!probe.ok && isCi()) throw new Error(`CI is set but no Docker engine answers: ${probe.reason}`);
if (!probe.ok) console.warn(`!! image pull tests SKIPPED: no Docker engine (${probe.reason})`);

// An image no registry holds: whether the registry answers "not found" or cannot be reached
// (no network here), the pull fails, which is what these tests are about.
const ABSENT = `platform-test/absent-${randomBytes(4).toString("hex")}:1`;

describe.skipIf(!probe.ok)("pulling through the sandbox, on the real engine", () => {
  it("rejects a failed pull with Docker's reason on one line, and reports no progress for it", async () => {
    const lines: PullProgress[] = [];
    const error = await pullImage(docker, ABSENT, {
      timeoutMs: 60_000,
      onProgress: (line) => lines.push(line),
    }).catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(Error);
    expect(error!.message.length).toBeGreaterThan(0);
    expect(error!.message.length).toBeLessThanOrEqual(500);
    expect(error!.message).not.toContain("\n");
    expect(lines.some((line) => JSON.stringify(line).includes("error"))).toBe(false);
  });

  it("says whether a pull was cancelled or timed out", async () => {
    const abort = new AbortController();
    abort.abort();
    await expect(
      pullImage(docker, ABSENT, { timeoutMs: 60_000, signal: abort.signal }),
    ).rejects.toThrow("the pull was cancelled");
    await expect(pullImage(docker, ABSENT, { timeoutMs: 1 })).rejects.toThrow(
      /the pull took longer than 1 ms|the pull was cancelled/,
    );
  });

  it("streams the same pull as lines, then throws its failure", async () => {
    const seen: PullProgress[] = [];
    const consume = async () => {
      for await (const line of pullProgress(docker, ABSENT, { timeoutMs: 60_000 })) seen.push(line);
    };
    await expect(consume()).rejects.toBeInstanceOf(Error);
  });

  it("ensureImage answers a local image, refuses one it cannot get (image_unavailable)", async () => {
    const local = await ensureImage(docker, "platform-test/busybox:1", {
      pull: false,
      timeoutMs: 1_000,
    }).catch(() => null);
    // The test images come from .ci/test-images.sh; without them only the refusals are checked.
    if (local) expect(local.Id).toMatch(/^sha256:/);
    await expect(
      ensureImage(docker, ABSENT, { pull: false, timeoutMs: 1_000 }),
    ).rejects.toMatchObject({
      code: "image_unavailable",
      message: expect.stringContaining("pulling is off"),
    });
    await expect(
      ensureImage(docker, ABSENT, { pull: true, timeoutMs: 60_000 }),
    ).rejects.toMatchObject({
      code: "image_unavailable",
      message: expect.stringContaining("could not be pulled and is not on the engine"),
    });
  });
});
