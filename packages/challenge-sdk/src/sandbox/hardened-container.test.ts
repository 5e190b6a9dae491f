import { describe, expect, it } from "vitest";
import { NOBODY } from "./container-user.js";
import {
  hardenedContainerOptions,
  type SandboxSpec,
  scratchVolumePaths,
} from "./hardened-container.js";
import { resolveTaskLimits } from "./task-limits.js";

const task: SandboxSpec = { image: "platform-test/busybox:1", command: ["echo", "hi"] };
const defaults = resolveTaskLimits(undefined);
const context = {
  name: "c1",
  user: NOBODY,
  limits: defaults,
  labels: { "platform.managed": "true" },
};

describe("hardenedContainerOptions", () => {
  it("builds the hardened sandbox by default", () => {
    const options = hardenedContainerOptions(task, context);
    expect(options).toMatchObject({
      name: "c1",
      Image: "platform-test/busybox:1",
      Cmd: ["echo", "hi"],
      WorkingDir: "/workspace",
      User: "65534:65534",
      NetworkDisabled: true,
      Tty: false,
      OpenStdin: false,
      Labels: { "platform.managed": "true" },
    });
    expect(options.HostConfig).toEqual({
      NetworkMode: "none",
      ReadonlyRootfs: true,
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges:true"],
      Privileged: false,
      Init: true,
      IpcMode: "private",
      PidsLimit: 512,
      Memory: 4096 * 1024 * 1024,
      MemorySwap: 4096 * 1024 * 1024,
      NanoCpus: 2e9,
      Tmpfs: {
        "/tmp": `rw,noexec,nosuid,nodev,size=${256 * 1024 * 1024}`,
        "/dev/shm": "ro,noexec,nosuid,nodev,size=4096",
      },
      Mounts: [],
      AutoRemove: false,
      RestartPolicy: { Name: "no" },
      LogConfig: { Type: "none", Config: {} },
    });
    expect(options.HostConfig?.DeviceRequests).toBeUndefined();
  });

  it("leaves out Docker's init only when the task says init: false", () => {
    expect(hardenedContainerOptions({ ...task, init: false }, context).HostConfig?.Init).toBe(
      false,
    );
    expect(hardenedContainerOptions({ ...task, init: true }, context).HostConfig?.Init).toBe(true);
  });

  it("mounts files read-only at /workspace and image volumes as capped tmpfs, never host disk", () => {
    const options = hardenedContainerOptions(task, {
      ...context,
      filesVolume: "vol-1",
      imageVolumes: ["/data", "/workspace", "/tmp"],
    });
    expect(options.HostConfig?.Mounts).toEqual([
      { Type: "volume", Source: "vol-1", Target: "/workspace", ReadOnly: true },
    ]);
    expect(Object.keys(options.HostConfig?.Tmpfs ?? {}).sort()).toEqual([
      "/data",
      "/dev/shm",
      "/tmp",
    ]);
  });

  it("keeps /dev/shm read-only and empty whatever VOLUMEs the image declares", () => {
    const options = hardenedContainerOptions(task, {
      ...context,
      imageVolumes: ["/dev/shm", "/dev/shm/", "/dev/shm/cache", "/data/", "/tmp/"],
    });
    expect(options.HostConfig?.Tmpfs).toEqual({
      "/tmp": `rw,noexec,nosuid,nodev,size=${256 * 1024 * 1024}`,
      "/dev/shm": "ro,noexec,nosuid,nodev,size=4096",
      "/data": `rw,noexec,nosuid,nodev,size=${256 * 1024 * 1024}`,
    });
    expect(scratchVolumePaths(["/workspace/", "/x"], { workspaceTaken: true })).toEqual(["/x"]);
    expect(scratchVolumePaths(["/workspace"], { workspaceTaken: false })).toEqual(["/workspace"]);
  });

  it("keeps ownership labels over the task's, and env as KEY=value", () => {
    const options = hardenedContainerOptions(
      { ...task, labels: { team: "a" }, env: { A: "1", B: "x=y" } },
      { ...context, labels: { "platform.job": "job-1" } },
    );
    expect(options.Labels).toEqual({ team: "a", "platform.job": "job-1" });
    expect(options.Env).toEqual(["A=1", "B=x=y"]);
  });

  it("asks nvidia for GPUs: by count, or the leased device ids", () => {
    const byCount = hardenedContainerOptions({ ...task, gpus: 2 }, context);
    expect(byCount.HostConfig?.DeviceRequests).toEqual([
      { Driver: "nvidia", Count: 2, Capabilities: [["gpu"]] },
    ]);
    const leased = hardenedContainerOptions(
      { ...task, gpus: 1 },
      { ...context, gpuDevices: ["GPU-3"] },
    );
    expect(leased.HostConfig?.DeviceRequests).toEqual([
      { Driver: "nvidia", DeviceIDs: ["GPU-3"], Capabilities: [["gpu"]] },
    ]);
  });
});
