import { describe, expect, it } from "vitest";
import { checkTask } from "./_check-task.js";
import {
  checkTaskLabels,
  HARDENED_LIMITS,
  hardenedContainerOptions,
  isRootUser,
  NOBODY,
  refuseWeakening,
  resolveTaskLimits,
  resolveTaskUser,
} from "./hardened-container.js";
import type { Task } from "./task.js";
import { TaskRejectedError } from "./task-errors.js";
import { DEFAULT_FILE_CAPS } from "./task-files.js";

const task: Task = { job_id: "job-1", image: "platform-test/busybox:1", command: ["echo", "hi"] };
const defaults = resolveTaskLimits(undefined);
const context = {
  name: "c1",
  user: NOBODY,
  limits: defaults,
  labels: { "platform.managed": "true" },
};

/** The code of the TaskRejectedError `run` throws (fails the test if it throws anything else). */
function codeOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(TaskRejectedError);
    return (error as TaskRejectedError).code;
  }
  throw new Error("expected a TaskRejectedError");
}

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
      Tmpfs: { "/tmp": `rw,noexec,nosuid,nodev,size=${256 * 1024 * 1024}` },
      Mounts: [],
      AutoRemove: false,
      RestartPolicy: { Name: "no" },
      LogConfig: { Type: "none", Config: {} },
    });
    expect(options.HostConfig?.DeviceRequests).toBeUndefined();
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
    expect(Object.keys(options.HostConfig?.Tmpfs ?? {}).sort()).toEqual(["/data", "/tmp"]);
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

describe("refusing a weakened sandbox", () => {
  it.each([
    [{ privileged: true }, "privileged"],
    [{ network: "host" }, "network"],
    [{ network: "bridge" }, "network"],
    [{ read_only: false }, "read_only"],
    [{ cap_add: ["SYS_ADMIN"] }, "cap_add"],
    [{ devices: ["/dev/kvm"] }, "devices"],
    [{ host_mounts: ["/:/host"] }, "host_mounts"],
    [{ user: "0" }, "user"],
    [{ user: "root" }, "user"],
    [{ user: "1000:0" }, "user"],
    [{ user: "0:1000" }, "user"],
    [{ user: "app" }, "user"],
  ])("refuses %o", (weakening, field) => {
    try {
      refuseWeakening(weakening);
      throw new Error("not refused");
    } catch (error) {
      expect(error).toMatchObject({ code: "weakening_refused", retryable: false });
      expect((error as Error).message).toContain(`${field}:`);
    }
  });

  it("accepts asking for exactly the defaults", () => {
    expect(() =>
      refuseWeakening({
        privileged: false,
        network: "none",
        read_only: true,
        cap_add: [],
        devices: [],
        host_mounts: [],
        user: "1000:1000",
      }),
    ).not.toThrow();
  });

  it("reserves the platform. label namespace for runners", () => {
    expect(codeOf(() => checkTaskLabels({ "platform.managed": "false" }))).toBe("invalid_label");
    expect(codeOf(() => checkTaskLabels({ platform: "x" }))).toBe("invalid_label");
    expect(() => checkTaskLabels({ "platformish.team": "a", team: "b" })).not.toThrow();
  });

  it("runs a root image as nobody and keeps a non-root image's own user", () => {
    for (const user of [undefined, "", "root", "0", "0:0", "1000:0", " root "]) {
      expect(isRootUser(user)).toBe(true);
      expect(resolveTaskUser(user)).toBe(NOBODY);
    }
    expect(resolveTaskUser("1000:1000")).toBe("1000:1000");
    expect(resolveTaskUser("app")).toBe("app");
  });
});

describe("checkTask", () => {
  const policy = { limits: HARDENED_LIMITS, fileCaps: DEFAULT_FILE_CAPS };

  it("fills the defaults of a valid task", () => {
    const checked = checkTask(task, policy);
    expect(checked.task).toMatchObject({ job_id: "job-1", timeout_seconds: 3600, gpus: 0 });
    expect(checked.limits).toEqual(defaults);
    expect(checked.files).toEqual([]);
  });

  it.each([
    ["not an object", "nope"],
    ["no job_id", { image: "x" }],
    ["a job_id unsafe in a container name", { ...task, job_id: "../etc" }],
    ["a job_id with a space", { ...task, job_id: "a b" }],
    ["an env name that is not one", { ...task, env: { "A=B": "x" } }],
    ["an env name starting with a digit", { ...task, env: { "1A": "x" } }],
    ["a label key with a space", { ...task, labels: { "BAD KEY": "x" } }],
    ["a timeout of 0", { ...task, timeout_seconds: 0 }],
    ["a timeout over a day", { ...task, timeout_seconds: 86_401 }],
    ["an unknown field", { ...task, extra: 1 }],
    ["a non-string command", { ...task, command: [1] }],
  ])("refuses %s as invalid_task", (_what, bad) => {
    expect(codeOf(() => checkTask(bad, policy))).toBe("invalid_task");
  });

  it("refuses weakening, reserved labels, bad files and limits before anything runs", () => {
    expect(codeOf(() => checkTask({ ...task, privileged: true }, policy))).toBe(
      "weakening_refused",
    );
    expect(codeOf(() => checkTask({ ...task, labels: { "platform.job": "other" } }, policy))).toBe(
      "invalid_label",
    );
    expect(
      codeOf(() => checkTask({ ...task, files: [{ path: "../x", content_base64: "" }] }, policy)),
    ).toBe("invalid_file");
    expect(codeOf(() => checkTask({ ...task, limits: { cpus: 4 } }, policy))).toBe(
      "limit_exceeded",
    );
    // Left to the broker: its maxima are its own configuration.
    expect(
      checkTask({ ...task, limits: { cpus: 4 } }, { limits: null, fileCaps: null }).limits,
    ).toBeNull();
  });
});
