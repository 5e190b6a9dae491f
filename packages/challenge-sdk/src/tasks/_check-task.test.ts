import {
  DEFAULT_FILE_CAPS,
  HARDENED_LIMITS,
  resolveTaskLimits,
} from "@platform/challenge-sdk/sandbox";
import { describe, expect, it } from "vitest";
import { checkTask } from "./_check-task.js";
import { type Task, taskFile } from "./task.js";
import { TaskRejectedError } from "./task-errors.js";

const task: Task = { jobId: "job-1", image: "platform-test/busybox:1", command: ["echo", "hi"] };
const defaults = resolveTaskLimits(undefined);

/** The TaskRejectedError `run` throws (fails the test if it throws anything else). */
function rejection(run: () => unknown): TaskRejectedError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(TaskRejectedError);
    return error as TaskRejectedError;
  }
  throw new Error("expected a TaskRejectedError");
}
const codeOf = (run: () => unknown) => rejection(run).code;

describe("checkTask", () => {
  const policy = { limits: HARDENED_LIMITS, fileCaps: DEFAULT_FILE_CAPS };

  it("fills the defaults of a valid task", () => {
    const checked = checkTask(task, policy);
    expect(checked.request).toMatchObject({ job_id: "job-1", timeout_seconds: 3600, gpus: 0 });
    expect(checked.limits).toEqual(defaults);
    expect(checked.files).toEqual([]);
  });

  it("turns the camelCase task into core's BrokerRunRequest, and nothing else", () => {
    const checked = checkTask(
      {
        ...task,
        timeoutSeconds: 60,
        limits: { memoryMb: 256, tmpfsMb: 512, outputBytes: 4096 },
        files: [taskFile("run.sh", "echo hi", 0o755)],
      },
      policy,
    );
    expect(checked.request).toEqual({
      job_id: "job-1",
      image: "platform-test/busybox:1",
      command: ["echo", "hi"],
      timeout_seconds: 60,
      gpus: 0,
      limits: { memory_mb: 256, tmpfs_mb: 512, output_bytes: 4096 },
      files: [
        { path: "run.sh", content_base64: Buffer.from("echo hi").toString("base64"), mode: 0o755 },
      ],
    });
    expect(checked.limits?.memoryBytes).toBe(256 * 1024 * 1024);
  });

  it.each([
    ["not an object", "nope"],
    ["no jobId", { image: "x" }],
    ["a jobId unsafe in a container name", { ...task, jobId: "../etc" }],
    ["a jobId with a space", { ...task, jobId: "a b" }],
    ["an env name that is not one", { ...task, env: { "A=B": "x" } }],
    ["an env name starting with a digit", { ...task, env: { "1A": "x" } }],
    ["a label key with a space", { ...task, labels: { "BAD KEY": "x" } }],
    ["a timeout of 0", { ...task, timeoutSeconds: 0 }],
    ["a timeout over a day", { ...task, timeoutSeconds: 86_401 }],
    ["an unknown field", { ...task, extra: 1 }],
    ["a non-string command", { ...task, command: [1] }],
  ])("refuses %s as invalid_task", (_what, bad) => {
    expect(codeOf(() => checkTask(bad, policy))).toBe("invalid_task");
  });

  it("refuses the old snake_case spelling, saying what to write instead", () => {
    const { jobId: _, ...rest } = task;
    for (const [bad, field, camel] of [
      [{ ...rest, job_id: "j" }, "job_id", "jobId"],
      [{ ...task, timeout_seconds: 5 }, "timeout_seconds", "timeoutSeconds"],
      [{ ...task, limits: { memory_mb: 5 } }, "limits.memory_mb", "memoryMb"],
      [
        { ...task, files: [{ path: "a", content_base64: "" }] },
        "files[0].content_base64",
        "contentBase64",
      ],
    ] as const) {
      const error = rejection(() => checkTask(bad, policy));
      expect(error.code).toBe("invalid_task");
      expect(error.message).toContain(`${field}: the task API is camelCase; write ${camel}`);
    }
  });

  it("refuses weakening, reserved labels, bad files and limits before anything runs", () => {
    expect(codeOf(() => checkTask({ ...task, privileged: true }, policy))).toBe(
      "weakening_refused",
    );
    expect(codeOf(() => checkTask({ ...task, labels: { "platform.job": "other" } }, policy))).toBe(
      "invalid_label",
    );
    expect(
      codeOf(() => checkTask({ ...task, files: [{ path: "../x", contentBase64: "" }] }, policy)),
    ).toBe("invalid_file");
    expect(codeOf(() => checkTask({ ...task, limits: { cpus: 4 } }, policy))).toBe(
      "limit_exceeded",
    );
    // Left to the broker: its maxima are its own configuration.
    expect(
      checkTask({ ...task, limits: { cpus: 4 } }, { limits: null, fileCaps: null }).limits,
    ).toBeNull();
  });

  it("names the author's fields in a refusal, never the wire's", () => {
    const limit = rejection(() => checkTask({ ...task, limits: { memoryMb: 5000 } }, policy));
    expect(limit.message).toMatch(/^limits\.memoryMb: 5000 is above the maximum of 4096/);
    expect(limit.details).toEqual({ field: "limits.memoryMb", maximum: 4096 });
    const weakened = rejection(() => checkTask({ ...task, readOnly: false }, policy));
    expect(weakened).toMatchObject({ code: "weakening_refused", details: { field: "readOnly" } });
    const file = rejection(() =>
      checkTask({ ...task, files: [{ path: "a", contentBase64: "a GVsbG8=" }] }, policy),
    );
    expect(file.message).toBe("files[0]: contentBase64 is not canonical base64");
    const timeout = rejection(() => checkTask({ ...task, timeoutSeconds: 0 }, policy));
    expect(timeout.message).toMatch(/^Invalid task: timeoutSeconds: /);
  });
});
