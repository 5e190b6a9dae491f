import {
  ContainerRunError,
  dockerMessage,
  engineFacts,
  ensureImage,
  ignoreMissing,
  imageRunFacts,
  OutputCapture,
  PLATFORM_LABELS,
  removeFilesVolume,
  runTaskContainer,
  SandboxRefusal,
  type TaskContainerOutcome,
} from "@platform/challenge-sdk/sandbox";
import type Docker from "dockerode";
import {
  type EngineFacts,
  type Executor,
  ExecutorError,
  type ManagedLeftover,
  type ManagedWorkload,
  type PreparedImage,
  type WorkloadResult,
  type WorkloadSpec,
  workloadFilters,
  workloadFromLabels,
  workloadOutput,
  workloadOwnership,
} from "./executor.js";

/** Options of {@link EngineExecutor}. */
export interface EngineExecutorOptions {
  pullTimeoutMs: number;
}

/**
 * Workloads as containers on one Docker engine, run by the SDK sandbox's `runTaskContainer`:
 * the same hardened container, files volume and attached run as a challenge's own docker task
 * runner, with the broker's labels and user. Files are mounted read-only at /workspace; /tmp is
 * the writable, noexec tmpfs.
 */
export class EngineExecutor implements Executor {
  readonly kind = "engine" as const;
  private factsPromise: Promise<EngineFacts> | undefined;

  constructor(
    private readonly docker: Docker,
    private readonly options: EngineExecutorOptions,
  ) {}

  facts(): Promise<EngineFacts> {
    this.factsPromise ??= engineFacts(this.docker).catch((error) => {
      this.factsPromise = undefined;
      throw error;
    });
    return this.factsPromise;
  }

  async prepareImage(image: string): Promise<PreparedImage> {
    try {
      const info = await ensureImage(this.docker, image, {
        pull: true,
        timeoutMs: this.options.pullTimeoutMs,
      });
      return imageRunFacts(info);
    } catch (error) {
      if (error instanceof SandboxRefusal)
        throw new ExecutorError("image_unavailable", error.message, { cause: error });
      throw error;
    }
  }

  async run(
    spec: WorkloadSpec,
    signal: AbortSignal,
    ended?: (result: WorkloadResult) => Promise<void>,
  ): Promise<WorkloadResult> {
    const capture = new OutputCapture(spec.limits.outputBytes);
    try {
      let result: WorkloadResult | undefined;
      const outcome = await runTaskContainerFor(this.docker, spec, capture, signal, async (o) => {
        result = workloadResult(o, capture);
        await ended?.(result);
      });
      return result ?? workloadResult(outcome, capture);
    } catch (error) {
      if (!(error instanceof ContainerRunError)) throw error;
      const what = FAILED_STEP[error.step];
      // Docker refusing the workload is the caller's 400; losing it mid-run is the broker's 500.
      if (!what) throw error.cause;
      throw new ExecutorError("executor_error", `${what}: ${dockerMessage(error.cause)}`, {
        cause: error.cause,
      });
    }
  }

  async list(masterId: string, slug?: string): Promise<ManagedWorkload[]> {
    const containers = await this.docker.listContainers({
      all: true,
      filters: { label: workloadFilters(masterId, slug, "run") },
    });
    const out: ManagedWorkload[] = [];
    for (const info of containers) {
      const name = (info.Names[0] ?? "").replace(/^\//, "");
      const running =
        info.State === "running" || info.State === "created" || info.State === "restarting";
      let finishedAt: Date | null = null;
      if (!running) {
        try {
          const finished = (await this.docker.getContainer(info.Id).inspect()).State.FinishedAt;
          finishedAt = finished && !finished.startsWith("0001") ? new Date(finished) : null;
        } catch {
          // Gone meanwhile: nothing to report.
          continue;
        }
      }
      const workload = workloadFromLabels(name, info.Labels, {
        image: info.Image,
        state: info.State,
        running,
        createdAt: new Date(info.Created * 1000),
        finishedAt,
      });
      // The filter asked Docker; the labels are checked again here before anything trusts them.
      if (workload && workload.masterId === masterId && (!slug || workload.slug === slug))
        out.push(workload);
    }
    return out;
  }

  async remove(name: string): Promise<boolean> {
    const removed = await ignoreMissing(() =>
      this.docker.getContainer(name).remove({ force: true, v: true }),
    );
    await removeFilesVolume(this.docker, name);
    return removed;
  }

  async leftovers(masterId: string): Promise<ManagedLeftover[]> {
    const out: ManagedLeftover[] = [];
    const staging = await this.docker.listContainers({
      all: true,
      filters: { label: workloadFilters(masterId, undefined, "staging") },
    });
    for (const info of staging) {
      const name = (info.Names[0] ?? "").replace(/^\//, "");
      // The sandbox names a staging container after its files volume: `<workload>-staging`.
      if (info.Labels?.[PLATFORM_LABELS.master] === masterId)
        out.push({ kind: "container", id: info.Id, workload: name.replace(/-staging$/, "") });
    }
    const { Volumes } = await this.docker.listVolumes({
      filters: { label: workloadFilters(masterId, undefined, "files") },
    });
    for (const volume of Volumes ?? []) {
      if (volume.Labels?.[PLATFORM_LABELS.master] === masterId)
        out.push({ kind: "volume", id: volume.Name, workload: volume.Name });
    }
    return out;
  }

  async removeLeftover(leftover: ManagedLeftover): Promise<void> {
    if (leftover.kind === "container")
      await ignoreMissing(() => this.docker.getContainer(leftover.id).remove({ force: true }));
    else if (leftover.kind === "volume") await removeFilesVolume(this.docker, leftover.id);
  }
}

/** Steps whose failure is Docker refusing the workload; the others are thrown as they came. */
const FAILED_STEP: Partial<Record<ContainerRunError["step"], string>> = {
  files: "Docker refused the workload's files",
  create: "Docker refused the container",
  start: "Docker could not start the container",
};

/** A run's outcome under the broker's wire names; aborted or removed from outside is `removed`. */
function workloadResult(outcome: TaskContainerOutcome, capture: OutputCapture): WorkloadResult {
  const { timedOut, aborted, removed } = outcome;
  return {
    ...workloadOutput(capture.result()),
    returncode: timedOut || removed || aborted ? null : outcome.exitCode,
    timed_out: timedOut,
    oom_killed: outcome.oomKilled && !timedOut,
    removed: removed || aborted,
  };
}

/** The sandbox's run of one workload: its spec as the hardened container's spec and context. */
function runTaskContainerFor(
  docker: Docker,
  spec: WorkloadSpec,
  capture: OutputCapture,
  signal: AbortSignal,
  beforeRemoval: (outcome: TaskContainerOutcome) => Promise<void>,
) {
  return runTaskContainer(docker, {
    spec: {
      image: spec.image,
      workdir: spec.workdir,
      env: spec.env,
      labels: spec.labels,
      gpus: spec.gpus,
      init: spec.init,
      ...(spec.command ? { command: spec.command } : {}),
      ...(spec.entrypoint ? { entrypoint: spec.entrypoint } : {}),
    },
    context: {
      name: spec.name,
      user: spec.user,
      limits: spec.limits,
      labels: workloadOwnership(spec),
      imageVolumes: spec.imageVolumes,
      gpuDevices: spec.gpuDevices,
    },
    files: spec.files,
    timeoutSeconds: spec.timeoutSeconds,
    capture,
    signal,
    beforeRemoval,
  });
}
