import type { BrokerFile, BrokerLimits, BrokerRunRequest } from "@platform/core";

/** One file placed under /workspace before the task starts (core's `BrokerFile`). */
export type TaskFile = BrokerFile;

/** Resource caps of one task (core's `BrokerLimits`); each may only lower the hardened default. */
export type TaskLimits = BrokerLimits;

/**
 * One container run. The fields are core's `BrokerRunRequest` (so a task goes to the master's
 * broker verbatim), minus the ones that exist there only to be refused (`network`,
 * `privileged`, `read_only`, `cap_add`, `devices`, `host_mounts`, `user`): the sandbox cannot be
 * weakened from a task. `timeout_seconds` defaults to 3600, `gpus` to 0.
 * @example const task: Task = { job_id: "eval-42", image: "ghcr.io/me/eval:1", command: ["python", "/workspace/run.py"], files: [taskFile("run.py", code)] };
 */
export type Task = Pick<
  BrokerRunRequest,
  "job_id" | "image" | "command" | "entrypoint" | "workdir" | "env" | "labels" | "limits" | "files"
> & {
  timeout_seconds?: number;
  gpus?: number;
};

/** How a task ended. `exitCode` is null when it was killed for its timeout. */
export interface TaskResult {
  containerName: string;
  stdout: string;
  stderr: string;
  exitCode: number | null;
  timedOut: boolean;
  oomKilled: boolean;
  /** Output past `limits.output_bytes` was read and dropped. */
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  durationMs: number;
}

/**
 * What a runner reports while a task runs, always in this order: `queued`, `started`, any
 * `log` lines, `finished`. A task refused or aborted before it ran ends after `queued`.
 */
export type TaskEvent =
  | { type: "queued"; jobId: string; at: Date }
  | { type: "started"; jobId: string; containerName: string; at: Date }
  | { type: "log"; jobId: string; stream: "stdout" | "stderr"; line: string; at: Date }
  | {
      type: "finished";
      jobId: string;
      containerName: string;
      exitCode: number | null;
      timedOut: boolean;
      oomKilled: boolean;
      durationMs: number;
      at: Date;
    };

/** Options of `TaskRunner.run`. */
export interface TaskRunOptions {
  /** Aborting kills and removes the container, then rejects with `TaskAbortedError`. */
  signal?: AbortSignal;
  /** Receives the task's events as they happen; a throwing listener is ignored. */
  onEvent?: (event: TaskEvent) => void;
}

/** Runs tasks in hardened containers; `brokerTaskRunner` and `dockerTaskRunner` implement it. */
export interface TaskRunner {
  /** Which backend this is. */
  readonly kind: "broker" | "docker";
  /** Runs one task to its end; rejects with a `TaskError` when it could not run. */
  run(task: Task, options?: TaskRunOptions): Promise<TaskResult>;
  /** Releases pooled connections. */
  close(): Promise<void>;
}

/**
 * A task file from text or bytes, base64-encoded as the wire format wants.
 * @example taskFile("src/main.py", "print('hi')", 0o644)
 */
export function taskFile(path: string, content: string | Uint8Array, mode?: number): TaskFile {
  const bytes = typeof content === "string" ? Buffer.from(content, "utf8") : Buffer.from(content);
  return mode === undefined
    ? { path, content_base64: bytes.toString("base64") }
    : { path, content_base64: bytes.toString("base64"), mode };
}
