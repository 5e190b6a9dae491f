import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import Docker from "dockerode";
import { checkTask } from "./_check-task.js";
import { taskEmitter } from "./_events.js";
import { AttachedRunError, type AttachedRunOutcome, runAttachedContainer } from "./attached-run.js";
import {
  HARDENED_LIMITS,
  hardenedContainerOptions,
  resolveTaskUser,
  TASK_LABELS,
  type TaskLimitPolicy,
  WORKSPACE,
} from "./hardened-container.js";
import { OutputCapture } from "./output-capture.js";
import type { Task, TaskResult, TaskRunner, TaskRunOptions } from "./task.js";
import {
  TaskAbortedError,
  TaskError,
  TaskRejectedError,
  TaskUnavailableError,
} from "./task-errors.js";
import {
  DEFAULT_FILE_CAPS,
  type PlacedFile,
  type TaskFileCaps,
  taskFilesArchive,
} from "./task-files.js";

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

/** What each failed step of an attached run is reported as. */
const ATTACHED_RUN_FAILURES: Record<AttachedRunError["step"], string> = {
  attach: "Docker could not attach to the container",
  start: "Docker could not start the container",
  wait: "Docker lost the container",
  inspect: "Docker lost the container",
};
/** Time past a container's deadline before `reap` removes it (its own runner should have). */
const REAP_GRACE_SECONDS = 60;

function dockerStatus(error: unknown): number | undefined {
  const status = (error as { statusCode?: unknown })?.statusCode;
  return typeof status === "number" ? status : undefined;
}

/** Docker's own message for a refused call, without dockerode's "(HTTP code …)" wrapping. */
function dockerMessage(error: unknown): string {
  const json = (error as { json?: { message?: unknown } })?.json;
  if (json && typeof json.message === "string") return json.message;
  return error instanceof Error ? error.message : String(error);
}

/** A refused engine call as a typed error: 4xx is about the task, anything else is transient. */
function engineError(what: string, error: unknown): TaskError {
  if (error instanceof TaskError) return error;
  const status = dockerStatus(error);
  const message = `${what}: ${dockerMessage(error)}`;
  if (status !== undefined && status >= 400 && status < 500) {
    return new TaskRejectedError("executor_error", message, { cause: error });
  }
  return new TaskUnavailableError("docker_unavailable", message, { cause: error });
}

/** Runs `action`, treating "no such object" (404) as done. */
async function ignoreMissing(action: () => Promise<unknown>): Promise<void> {
  try {
    await action();
  } catch (error) {
    if (dockerStatus(error) !== 404) throw error;
  }
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
 * development, a self-hosted challenge). Same interface and same hardened sandbox as the
 * broker backend (`hardenedContainerOptions`); output streams live as `log` events.
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
    nvidia ??= docker.info().then(
      (info: { Runtimes?: Record<string, unknown> }) =>
        Object.keys(info.Runtimes ?? {}).includes("nvidia"),
      (error: unknown) => {
        nvidia = undefined;
        throw engineError("Docker engine unavailable", error);
      },
    );
    return nvidia;
  };

  /** The image's configured user and declared volumes, pulling it first when allowed. */
  async function prepareImage(image: string, signal?: AbortSignal) {
    const inspect = async () => {
      try {
        return await docker.getImage(image).inspect();
      } catch (error) {
        if (dockerStatus(error) === 404) return null;
        throw engineError("Docker engine unavailable", error);
      }
    };
    let info = await inspect();
    if (!info && pull) {
      try {
        const stream = await docker.pull(image, {
          abortSignal: AbortSignal.any([
            AbortSignal.timeout(pullTimeoutMs),
            ...(signal ? [signal] : []),
          ]),
        });
        await new Promise<void>((resolve, reject) => {
          docker.modem.followProgress(stream, (error: Error | null) =>
            error ? reject(error) : resolve(),
          );
        });
      } catch (error) {
        if (signal?.aborted)
          throw new TaskAbortedError(`Task aborted while pulling ${image}`, signal.reason);
        throw new TaskRejectedError(
          "image_unavailable",
          `Image ${image} is not on the engine and could not be pulled: ${dockerMessage(error)}`,
          {
            cause: error,
          },
        );
      }
      info = await inspect();
    }
    if (!info) {
      throw new TaskRejectedError(
        "image_unavailable",
        `Image ${image} is not on the engine${pull ? " after pulling it" : " (pulling is off)"}`,
      );
    }
    return {
      user: (info.Config?.User as string | undefined) || undefined,
      volumes: Object.keys((info.Config?.Volumes as Record<string, unknown> | null) ?? {}),
    };
  }

  async function removeVolume(name: string): Promise<void> {
    // A volume stays "in use" for a moment while Docker finishes removing its container.
    for (let attempt = 0; attempt < 10; attempt++) {
      try {
        await ignoreMissing(() => docker.getVolume(name).remove());
        return;
      } catch (error) {
        if (dockerStatus(error) !== 409) return;
        await sleep(100 * (attempt + 1));
      }
    }
  }

  /**
   * Docker cannot write into a tmpfs or a read-only root before the container starts (the
   * archive lands under the mount, invisible), so files go into a per-task volume through a
   * staging container that is never started, and the task mounts that volume read-only.
   */
  async function placeFiles(
    name: string,
    image: string,
    files: PlacedFile[],
    labels: Record<string, string>,
  ): Promise<string> {
    await docker.createVolume({ Name: name, Labels: { ...labels, [TASK_LABELS.role]: "files" } });
    const staging = await docker.createContainer({
      name: `${name}-staging`,
      Image: image,
      Entrypoint: ["/platform-staging-never-started"],
      Labels: { ...labels, [TASK_LABELS.role]: "staging" },
      NetworkDisabled: true,
      HostConfig: {
        NetworkMode: "none",
        Mounts: [{ Type: "volume", Source: name, Target: WORKSPACE }],
      },
    });
    try {
      await staging.putArchive(taskFilesArchive(files), { path: WORKSPACE });
    } finally {
      await ignoreMissing(() => staging.remove({ force: true })).catch(() => {});
    }
    return name;
  }

  async function run(task: Task, runOptions: TaskRunOptions = {}): Promise<TaskResult> {
    const { signal } = runOptions;
    const checked = checkTask(task, { limits: policy, fileCaps });
    const spec = checked.task;
    const limits = checked.limits!;
    const jobId = spec.job_id;
    const emit = taskEmitter(runOptions.onEvent);
    const abortedError = () =>
      new TaskAbortedError(`Task ${jobId} was aborted; its container was removed`, signal?.reason);
    if (signal?.aborted) throw abortedError();
    emit({ type: "queued", jobId, at: new Date() });

    if (spec.gpus > 0 && !(await hasNvidia())) {
      throw new TaskRejectedError(
        "gpu_unavailable",
        `The task asks for ${spec.gpus} GPU(s) but this Docker engine has no nvidia runtime; it is refused, never run on CPU`,
      );
    }
    const image = await prepareImage(spec.image, signal);
    if (signal?.aborted) throw abortedError();

    const name = `platform-task-${jobId}-${randomBytes(4).toString("hex")}`;
    const deadline = Math.ceil(Date.now() / 1000) + spec.timeout_seconds;
    const labels = {
      ...spec.labels,
      [TASK_LABELS.managed]: "true",
      [TASK_LABELS.job]: jobId,
      [TASK_LABELS.runner]: DOCKER_RUNNER_LABEL,
      [TASK_LABELS.deadline]: String(deadline),
    };
    let filesVolume: string | null = null;
    let container: Docker.Container | undefined;
    try {
      if (checked.files.length) {
        try {
          filesVolume = await placeFiles(name, spec.image, checked.files, labels);
        } catch (error) {
          throw engineError("Docker refused the task's files", error);
        }
      }
      if (signal?.aborted) throw abortedError();
      const createOptions = hardenedContainerOptions(spec, {
        name,
        user: resolveTaskUser(image.user),
        limits,
        labels: { ...labels, [TASK_LABELS.role]: "run" },
        filesVolume,
        imageVolumes: image.volumes,
      });
      try {
        container = await docker.createContainer(createOptions);
      } catch (error) {
        throw engineError("Docker refused the container", error);
      }
      return await attachAndWait(
        container,
        name,
        jobId,
        spec.timeout_seconds,
        limits.outputBytes,
        emit,
        signal,
      );
    } finally {
      await ignoreMissing(() =>
        (container ?? docker.getContainer(name)).remove({ force: true, v: true }),
      ).catch(() => {});
      if (checked.files.length) {
        // A staging container left by a placement that failed half-way.
        await ignoreMissing(() =>
          docker.getContainer(`${name}-staging`).remove({ force: true }),
        ).catch(() => {});
        await removeVolume(name);
      }
    }
  }

  async function attachAndWait(
    container: Docker.Container,
    name: string,
    jobId: string,
    timeoutSeconds: number,
    outputBytes: number,
    emit: ReturnType<typeof taskEmitter>,
    signal: AbortSignal | undefined,
  ): Promise<TaskResult> {
    const startedAt = Date.now();
    // Lines that arrive before `started` is reported wait for it, so events stay in order.
    let held: { stream: "stdout" | "stderr"; line: string }[] | null = [];
    const capture = new OutputCapture(outputBytes, (stream, line) => {
      if (held) held.push({ stream, line });
      else emit({ type: "log", jobId, stream, line, at: new Date() });
    });
    let outcome: AttachedRunOutcome;
    try {
      outcome = await runAttachedContainer(container, {
        timeoutSeconds,
        capture,
        signal,
        onStarted: () => {
          emit({ type: "started", jobId, containerName: name, at: new Date() });
          for (const { stream: which, line } of held ?? [])
            emit({ type: "log", jobId, stream: which, line, at: new Date() });
          held = null;
        },
      });
    } catch (error) {
      if (!(error instanceof AttachedRunError)) throw error;
      throw engineError(ATTACHED_RUN_FAILURES[error.step], error.cause);
    }
    const { timedOut } = outcome;
    if (outcome.aborted)
      throw new TaskAbortedError(
        `Task ${jobId} was aborted; its container was removed`,
        signal?.reason,
      );
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
    const filters = {
      label: [`${TASK_LABELS.managed}=true`, `${TASK_LABELS.runner}=${DOCKER_RUNNER_LABEL}`],
    };
    const overdue = (labels: Record<string, string> | undefined) => {
      const deadline = Number(labels?.[TASK_LABELS.deadline]);
      return Number.isFinite(deadline) && deadline + REAP_GRACE_SECONDS < now;
    };
    const removed: string[] = [];
    for (const info of await docker.listContainers({ all: true, filters })) {
      // The filter asked Docker; the labels are checked again before anything is removed.
      if (info.Labels?.[TASK_LABELS.runner] !== DOCKER_RUNNER_LABEL || !overdue(info.Labels))
        continue;
      await ignoreMissing(() =>
        docker.getContainer(info.Id).remove({ force: true, v: true }),
      ).catch(() => {});
      removed.push((info.Names[0] ?? info.Id).replace(/^\//, ""));
    }
    const { Volumes } = await docker.listVolumes({ filters });
    for (const volume of Volumes ?? []) {
      if (volume.Labels?.[TASK_LABELS.runner] !== DOCKER_RUNNER_LABEL || !overdue(volume.Labels))
        continue;
      await removeVolume(volume.Name);
      removed.push(volume.Name);
    }
    return removed;
  }

  return { kind: "docker", run, reap, close: async () => {} };
}
