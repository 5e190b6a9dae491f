import { setTimeout as sleep } from "node:timers/promises";
import {
  AttachedRunError,
  type AttachedRunOutcome,
  hardenedContainerOptions,
  OutputCapture,
  runAttachedContainer,
  type Task,
  taskFilesArchive,
  WORKSPACE,
} from "@platform/challenge-sdk";
import type Docker from "dockerode";
import { dockerMessage, dockerStatus, engineFacts, ignoreMissing } from "./docker-client.js";
import {
  type EngineFacts,
  type Executor,
  ExecutorError,
  LABELS,
  labelFilters,
  type ManagedLeftover,
  type ManagedWorkload,
  type PreparedImage,
  type WorkloadResult,
  type WorkloadSpec,
  workloadFromLabels,
  workloadLabels,
  workloadOutput,
} from "./executor.js";
import { localImage, pullFailure, pullImageQuietly } from "./image-pull.js";

/** Options of {@link EngineExecutor}. */
export interface EngineExecutorOptions {
  pullTimeoutMs: number;
}

/**
 * The hardened container configuration of one workload: the SDK's `hardenedContainerOptions`
 * (the same sandbox a challenge's docker runner builds) with the broker's labels and user.
 */
export function engineContainerOptions(
  spec: WorkloadSpec,
  filesVolume: string | null,
): Docker.ContainerCreateOptions {
  const task: Task = {
    job_id: spec.jobId,
    image: spec.image,
    workdir: spec.workdir,
    env: spec.env,
    gpus: spec.gpus,
    ...(spec.command ? { command: spec.command } : {}),
    ...(spec.entrypoint ? { entrypoint: spec.entrypoint } : {}),
  };
  return hardenedContainerOptions(task, {
    name: spec.name,
    user: spec.user,
    limits: spec.limits,
    // workloadLabels already holds the request's labels under the ownership labels.
    labels: workloadLabels(spec),
    filesVolume,
    imageVolumes: spec.imageVolumes,
    gpuDevices: spec.gpuDevices,
  });
}

/**
 * Workloads as containers on one Docker engine. Files go into a per-workload volume through a
 * container that is never started (Docker cannot write into a tmpfs or a read-only root
 * before start), mounted read-only at /workspace; /tmp is the writable, noexec tmpfs.
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
    let info = await localImage(this.docker, image);
    if (!info) {
      try {
        await pullImageQuietly(this.docker, image, { timeoutMs: this.options.pullTimeoutMs });
      } catch (error) {
        throw new ExecutorError(
          "image_unavailable",
          `Image "${image}" is not on the engine and could not be pulled: ${pullFailure(error)}`,
          {
            cause: error,
          },
        );
      }
      info = await localImage(this.docker, image);
      if (!info)
        throw new ExecutorError(
          "image_unavailable",
          `Image "${image}" is not on the engine after pulling it`,
        );
    }
    const volumes = Object.keys(info.Config?.Volumes ?? {}).filter((path) => path !== "/tmp");
    return { user: info.Config?.User || undefined, volumes };
  }

  async run(
    spec: WorkloadSpec,
    signal: AbortSignal,
    ended?: (result: WorkloadResult) => Promise<void>,
  ): Promise<WorkloadResult> {
    const docker = this.docker;
    let filesVolume: string | null = null;
    let container: Docker.Container | undefined;
    try {
      if (spec.files.length) filesVolume = await this.placeFiles(spec);
      try {
        container = await docker.createContainer(engineContainerOptions(spec, filesVolume));
      } catch (error) {
        throw new ExecutorError(
          "executor_error",
          `Docker refused the container: ${dockerMessage(error)}`,
          { cause: error },
        );
      }
      const result = await this.attachAndWait(container, spec, signal);
      await ended?.(result);
      return result;
    } finally {
      await ignoreMissing(() =>
        (container ?? docker.getContainer(spec.name)).remove({ force: true, v: true }),
      ).catch(() => {});
      if (filesVolume) await this.removeVolume(filesVolume);
    }
  }

  private async placeFiles(spec: WorkloadSpec): Promise<string> {
    const name = spec.name;
    try {
      await this.docker.createVolume({ Name: name, Labels: workloadLabels(spec, "files") });
      // The staging container only gives putArchive a writable path into the volume.
      const staging = await this.docker.createContainer({
        name: `${name}-staging`,
        Image: spec.image,
        Entrypoint: ["/platform-staging-never-started"],
        Labels: workloadLabels(spec, "staging"),
        NetworkDisabled: true,
        HostConfig: {
          NetworkMode: "none",
          Mounts: [{ Type: "volume", Source: name, Target: WORKSPACE }],
        },
      });
      try {
        await staging.putArchive(taskFilesArchive(spec.files), { path: WORKSPACE });
      } finally {
        await ignoreMissing(() => staging.remove({ force: true })).catch(() => {});
      }
      return name;
    } catch (error) {
      await this.removeVolume(name);
      throw new ExecutorError(
        "executor_error",
        `Docker refused the workload's files: ${dockerMessage(error)}`,
        { cause: error },
      );
    }
  }

  private async attachAndWait(
    container: Docker.Container,
    spec: WorkloadSpec,
    signal: AbortSignal,
  ): Promise<WorkloadResult> {
    const capture = new OutputCapture(spec.limits.outputBytes);
    let outcome: AttachedRunOutcome;
    try {
      outcome = await runAttachedContainer(container, {
        timeoutSeconds: spec.timeoutSeconds,
        capture,
        signal,
      });
    } catch (error) {
      if (!(error instanceof AttachedRunError)) throw error;
      if (error.step !== "start") throw error.cause;
      throw new ExecutorError(
        "executor_error",
        `Docker could not start the container: ${dockerMessage(error.cause)}`,
        { cause: error.cause },
      );
    }
    const { timedOut, aborted, removed } = outcome;
    return {
      ...workloadOutput(capture.result()),
      returncode: timedOut || removed || aborted ? null : outcome.exitCode,
      timed_out: timedOut,
      oom_killed: outcome.oomKilled && !timedOut,
      removed: removed || aborted,
    };
  }

  private async removeVolume(name: string): Promise<void> {
    // A volume is briefly "in use" while Docker finishes removing the container that held it.
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await ignoreMissing(() => this.docker.getVolume(name).remove());
        return;
      } catch (error) {
        if (dockerStatus(error) !== 409) return;
        await sleep(100 * (attempt + 1));
      }
    }
  }

  async list(masterId: string, slug?: string): Promise<ManagedWorkload[]> {
    const containers = await this.docker.listContainers({
      all: true,
      filters: { label: labelFilters(masterId, slug, "run") },
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
    await ignoreMissing(() =>
      this.docker.getContainer(`${name}-staging`).remove({ force: true }),
    ).catch(() => {});
    await this.removeVolume(name);
    return removed;
  }

  async leftovers(masterId: string): Promise<ManagedLeftover[]> {
    const out: ManagedLeftover[] = [];
    const staging = await this.docker.listContainers({
      all: true,
      filters: { label: labelFilters(masterId, undefined, "staging") },
    });
    for (const info of staging) {
      const name = (info.Names[0] ?? "").replace(/^\//, "");
      if (info.Labels?.[LABELS.master] === masterId)
        out.push({ kind: "container", id: info.Id, workload: name.replace(/-staging$/, "") });
    }
    const { Volumes } = await this.docker.listVolumes({
      filters: { label: labelFilters(masterId, undefined, "files") },
    });
    for (const volume of Volumes ?? []) {
      if (volume.Labels?.[LABELS.master] === masterId)
        out.push({ kind: "volume", id: volume.Name, workload: volume.Name });
    }
    return out;
  }

  async removeLeftover(leftover: ManagedLeftover): Promise<void> {
    if (leftover.kind === "container")
      await ignoreMissing(() => this.docker.getContainer(leftover.id).remove({ force: true }));
    else if (leftover.kind === "volume") await this.removeVolume(leftover.id);
  }
}
