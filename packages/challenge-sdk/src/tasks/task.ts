/** One file placed under /workspace before the task starts, read-only. */
export interface TaskFile {
  /** Relative to /workspace, "/" between segments, no `..`. */
  path: string;
  /** The content, base64-encoded (`taskFile` does that). */
  contentBase64: string;
  /** Permission bits (default 0o644); set-id and sticky bits are dropped. */
  mode?: number;
}

/**
 * Resource caps of one task. CPU, memory and pids default to the hardened maximum and may only
 * be lowered; /tmp and output default lower and may rise to their maximum.
 */
export interface TaskLimits {
  cpus?: number;
  memoryMb?: number;
  pids?: number;
  tmpfsMb?: number;
  /** Bytes kept per stream; the rest is read and dropped. */
  outputBytes?: number;
}

/**
 * One container run, in the task API's one casing (camelCase). The broker runner sends it as
 * core's `BrokerRunRequest` (`jobId` becomes `job_id` and so on); nothing in a task can weaken
 * the sandbox (no network, privileges, capabilities, devices, host mounts or user), and a field
 * asking for that is refused at run time.
 * @example const task: Task = { jobId: "eval-42", image: "ghcr.io/me/eval:1", command: ["python", "/workspace/run.py"], files: [taskFile("run.py", code)], timeoutSeconds: 600 };
 */
export interface Task {
  /** Names the run (and its container): letters, digits, `_`, `.`, `-`; at most 128. */
  jobId: string;
  image: string;
  command?: string[];
  entrypoint?: string[];
  /** Default /workspace. */
  workdir?: string;
  env?: Record<string, string>;
  /** Your own labels; the `platform.` namespace is reserved. */
  labels?: Record<string, string>;
  limits?: TaskLimits;
  files?: TaskFile[];
  /** 1 to 86 400, default 3600. */
  timeoutSeconds?: number;
  /** Default 0; refused where no GPU can run it, never run on CPU instead. */
  gpus?: number;
  /**
   * Docker's init as PID 1 (default true). `false` makes the command PID 1 itself: nothing of
   * the task's uid runs above it (Docker's init holds the environment and the container's
   * stdout, readable to any process of that uid), and from inside the container no signal it
   * has no handler for reaches it (SIGKILL included). It must then reap its own children.
   */
  init?: boolean;
}

/** How a task ended. `exitCode` is null when it was killed for its timeout. */
export interface TaskResult {
  containerName: string;
  stdout: string;
  stderr: string;
  exitCode: number | null;
  timedOut: boolean;
  oomKilled: boolean;
  /** Output past `limits.outputBytes` was read and dropped. */
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
 * A task file from text or bytes.
 * @example taskFile("src/main.py", "print('hi')", 0o644)
 */
export function taskFile(path: string, content: string | Uint8Array, mode?: number): TaskFile {
  const bytes = typeof content === "string" ? Buffer.from(content, "utf8") : Buffer.from(content);
  const contentBase64 = bytes.toString("base64");
  return mode === undefined ? { path, contentBase64 } : { path, contentBase64, mode };
}
