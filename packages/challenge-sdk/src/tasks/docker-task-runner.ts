import { randomBytes } from "node:crypto";
import {
  ContainerRunError,
  type ContainerRunStep,
  DEFAULT_FILE_CAPS,
  deadlineOf,
  dockerMessage,
  dockerStatus,
  engineFacts,
  ensureImage,
  HARDENED_LIMITS,
  ignoreMissing,
  imageRunFacts,
  labelFilters,
  OutputCapture,
  ownershipLabels,
  PLATFORM_LABELS,
  removeFilesVolume,
  resolveTaskUser,
  runTaskContainer,
  SandboxRefusal,
  type TaskContainerOutcome,
  type TaskFileCaps,
  type TaskLimitPolicy,
} from "@platform/challenge-sdk/sandbox";
import Docker from "dockerode";
import { checkTask, taskRejection } from "./_check-task.js";
import { taskEmitter } from "./_events.js";
import type { Task, TaskResult, TaskRunner, TaskRunOptions } from "./task.js";
import {
  TaskAbortedError,
  TaskError,
  TaskRejectedError,
  TaskUnavailableError,
} from "./task-errors.js";

/** Options of {@link dockerTaskRunner}. */
export interface DockerTaskRunnerOptions {
  /** The engine (default: DOCKER_HOST, else the local socket). */
  docker?: Docker;
  /** Maxima and defaults of task resources (default: the hardened 2 CPUs / 4 GB / 512 pids). */
  limits?: Partial<TaskLimitPolicy>;
  /** Caps on a task's files (default: 256 files, 8 MiB each, 16 MiB in all). */
  fileCaps?: Partial<TaskFileCaps>;
  /** Pull an image that is not on the engine (default true). */
  pull?: boolean;
  /** Time a pull may take (default 300 000 ms). */
  pullTimeoutMs?: number;
}

/** The `platform.runner` label value of this backend's containers. */
export const DOCKER_RUNNER_LABEL = "sdk-docker";

/** What each failed Docker step of a run is reported as. */
const STEP_FAILURES: Record<ContainerRunStep, string> = {
  files: "Docker refused the task's files",
  create: "Docker refused the container",
  attach: "Docker could not attach to the container",
  start: "Docker could not start the container",
  wait: "Docker lost the container",
  inspect: "Docker lost the container",
};
/** Time past a container's deadline before `reap` removes it (its own runner should have). */
const REAP_GRACE_SECONDS = 60;

/** A refused engine call as a typed error: 4xx is about the task, anything else is transient. */
function engineError(what: string, error: unknown): TaskError {
  if (error instanceof TaskError) return error;
  if (error instanceof SandboxRefusal) return taskRejection(error);
  const status = dockerStatus(error);
  const message = `${what}: ${dockerMessage(error)}`;
  if (status !== undefined && status >= 400 && status < 500) {
    return new TaskRejectedError("executor_error", message, { cause: error });
  }
  return new TaskUnavailableError("docker_unavailable", message, { cause: error });
}

/** A task runner with a `reap` for what a crashed process left behind. */
export interface DockerTaskRunner extends TaskRunner {
  readonly kind: "docker";
  /**
   * Removes this backend's containers and files volumes whose deadline (timeout + 60 s) has
   * passed: what a process killed mid-run left. Returns the names removed.
   */
  reap(): Promise<string[]>;
}

/**
 * Runs tasks straight on a local Docker engine, for a single machine with no master (local
 * development, a self-hosted challenge). Same interface, same checks and the same hardened
 * container as the broker backend: both run through `@platform/challenge-sdk/sandbox`'s
 * `runTaskContainer`. Output streams live as `log` events.
 * @example const runner = dockerTaskRunner(); const result = await runner.run(task, { onEvent: console.log });
 */
export function dockerTaskRunner(options: DockerTaskRunnerOptions = {}): DockerTaskRunner {
  const docker = options.docker ?? new Docker();
  const policy: TaskLimitPolicy = { ...HARDENED_LIMITS, ...options.limits };
  const fileCaps: TaskFileCaps = { ...DEFAULT_FILE_CAPS, ...options.fileCaps };
  const pull = options.pull ?? true;
  const pullTimeoutMs = options.pullTimeoutMs ?? 300_000;
  let nvidia: Promise<boolean> | undefined;

  const hasNvidia = () => {
    nvidia ??= engineFacts(docker).then(
      (facts) => facts.nvidia,
      (error: unknown) => {
        nvidia = undefined;
        throw engineError("Docker engine unavailable", error);
      },
    );
    return nvidia;
  };

  async function run(task: Task, runOptions: TaskRunOptions = {}): Promise<TaskResult> {
    const { signal } = runOptions;
    const checked = checkTask(task, { limits: policy, fileCaps });
    const request = checked.request;
    const limits = checked.limits!;
    const jobId = request.job_id;
    const emit = taskEmitter(runOptions.onEvent);
    const abortedError = () =>
      new TaskAbortedError(`Task ${jobId} was aborted; its container was removed`, signal?.reason);
    if (signal?.aborted) throw abortedError();
    emit({ type: "queued", jobId, at: new Date() });

    if (request.gpus > 0 && !(await hasNvidia())) {
      throw new TaskRejectedError(
        "gpu_unavailable",
        `The task asks for ${request.gpus} GPU(s) but this Docker engine has no nvidia runtime; it is refused, never run on CPU`,
      );
    }
    let image: ReturnType<typeof imageRunFacts>;
    try {
      image = imageRunFacts(
        await ensureImage(docker, request.image, { pull, timeoutMs: pullTimeoutMs, signal }),
      );
    } catch (error) {
      if (signal?.aborted)
        throw new TaskAbortedError(`Task aborted while pulling ${request.image}`, signal.reason);
      throw engineError("Docker engine unavailable", error);
    }
    if (signal?.aborted) throw abortedError();

    const name = `platform-task-${jobId}-${randomBytes(4).toString("hex")}`;
    const deadline = Math.ceil(Date.now() / 1000) + request.timeout_seconds;
    const startedAt = Date.now();
    // Lines that arrive before `started` is reported wait for it, so events stay in order.
    let held: { stream: "stdout" | "stderr"; line: string }[] | null = [];
    const capture = new OutputCapture(limits.outputBytes, (stream, line) => {
      if (held) held.push({ stream, line });
      else emit({ type: "log", jobId, stream, line, at: new Date() });
    });
    let outcome: TaskContainerOutcome;
    try {
      outcome = await runTaskContainer(docker, {
        spec: request,
        context: {
          name,
          user: resolveTaskUser(image.user),
          limits,
          labels: ownershipLabels({ job: jobId, deadline, runner: DOCKER_RUNNER_LABEL }),
          imageVolumes: image.volumes,
        },
        files: checked.files,
        timeoutSeconds: request.timeout_seconds,
        capture,
        signal,
        onStarted: () => {
          emit({ type: "started", jobId, containerName: name, at: new Date() });
          for (const { stream, line } of held ?? [])
            emit({ type: "log", jobId, stream, line, at: new Date() });
          held = null;
        },
      });
    } catch (error) {
      if (!(error instanceof ContainerRunError)) throw error;
      throw engineError(STEP_FAILURES[error.step], error.cause);
    }
    if (outcome.aborted) throw abortedError();
    const { timedOut } = outcome;
    const result: TaskResult = {
      containerName: name,
      ...capture.result(),
      exitCode: timedOut ? null : outcome.exitCode,
      timedOut,
      oomKilled: outcome.oomKilled && !timedOut,
      durationMs: Date.now() - startedAt,
    };
    emit({
      type: "finished",
      jobId,
      containerName: name,
      exitCode: result.exitCode,
      timedOut,
      oomKilled: result.oomKilled,
      durationMs: result.durationMs,
      at: new Date(),
    });
    return result;
  }

  async function reap(): Promise<string[]> {
    const now = Date.now() / 1000;
    const filters = { label: labelFilters({ managed: "true", runner: DOCKER_RUNNER_LABEL }) };
    // The filter asked Docker; the labels are checked again before anything is removed.
    const ours = (labels: Record<string, string> | undefined) => {
      const deadline = deadlineOf(labels);
      return (
        labels?.[PLATFORM_LABELS.runner] === DOCKER_RUNNER_LABEL &&
        deadline !== null &&
        deadline + REAP_GRACE_SECONDS < now
      );
    };
    const removed: string[] = [];
    for (const info of await docker.listContainers({ all: true, filters })) {
      if (!ours(info.Labels)) continue;
      await ignoreMissing(() =>
        docker.getContainer(info.Id).remove({ force: true, v: true }),
      ).catch(() => {});
      removed.push((info.Names[0] ?? info.Id).replace(/^\//, ""));
    }
    const { Volumes } = await docker.listVolumes({ filters });
    for (const volume of Volumes ?? []) {
      if (!ours(volume.Labels)) continue;
      await removeFilesVolume(docker, volume.Name);
      removed.push(volume.Name);
    }
    return removed;
  }

  return { kind: "docker", run, reap, close: async () => {} };
}
