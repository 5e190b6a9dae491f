import { setTimeout as sleep } from "node:timers/promises";
import {
  dockerMessage,
  engineFacts,
  ignoreMissing,
  isMissing,
  OutputCapture,
  PLATFORM_LABELS,
  SHM_PATH,
  SHM_TMPFS_BYTES,
  scratchVolumePaths,
  WORKSPACE,
} from "@platform/challenge-sdk/sandbox";
import type Docker from "dockerode";
import {
  FINAL_STATES,
  latestTask as latest,
  SETTLING_STATES,
  type SwarmTask,
  serviceTasks,
} from "../swarm/swarm-tasks.js";
import { EngineExecutor } from "./engine-executor.js";
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
  workloadLabels,
  workloadOutput,
} from "./executor.js";

/** Largest file a swarm config holds: Docker wants "larger than 0 and less than 1024000 bytes". */
export const SWARM_MAX_FILE_BYTES = 1_024_000 - 1;

const POLL_MS = 200;

interface SwarmService {
  ID: string;
  CreatedAt?: string;
  Spec?: {
    Name?: string;
    Labels?: Record<string, string>;
    TaskTemplate?: { ContainerSpec?: { Image?: string } };
  };
}

/** Options of {@link SwarmExecutor}. */
export interface SwarmExecutorOptions {
  pullTimeoutMs: number;
}

/** The run-once service of one workload (exported for inspection in tests). */
export function swarmServiceSpec(
  spec: WorkloadSpec,
  network: string,
  configs: { id: string; name: string; path: string; mode: number }[],
): Docker.CreateServiceOptions {
  const labels = workloadLabels(spec);
  const containerSpec: Docker.ContainerSpec = {
    Image: spec.image,
    Labels: labels,
    Env: Object.entries(spec.env).map(([key, value]) => `${key}=${value}`),
    Dir: spec.workdir,
    User: spec.user,
    ReadOnly: true,
    Init: spec.init,
    CapabilityDrop: ["ALL"],
    // Docker mounts a tmpfs noexec,nosuid,nodev by default; swarm (API 1.41) cannot set more.
    // Image VOLUMEs become capped tmpfs too: never a writable, uncapped directory on a node's disk.
    // /dev/shm gets an empty read-only tmpfs in place of Docker's writable 64 MiB one, as on the
    // engine (hardenedContainerOptions): /tmp stays the one writable place.
    Mounts: [
      ...["/tmp", ...scratchVolumePaths(spec.imageVolumes, { workspaceTaken: false })].map(
        (target) =>
          ({
            Type: "tmpfs",
            Target: target,
            TmpfsOptions: { SizeBytes: spec.limits.tmpfsBytes, Mode: 0o1777 },
          }) as Docker.MountSettings,
      ),
      {
        Type: "tmpfs",
        Target: SHM_PATH,
        ReadOnly: true,
        TmpfsOptions: { SizeBytes: SHM_TMPFS_BYTES },
      } as Docker.MountSettings,
    ],
    Configs: configs.map((config) => ({
      ConfigID: config.id,
      ConfigName: config.name,
      File: { Name: `${WORKSPACE}/${config.path}`, UID: "0", GID: "0", Mode: config.mode },
    })),
    StopGracePeriod: 1_000_000_000,
  };
  if (spec.entrypoint) containerSpec.Command = spec.entrypoint;
  if (spec.command) containerSpec.Args = spec.command;
  const limits = {
    NanoCPUs: Math.round(spec.limits.cpus * 1e9),
    MemoryBytes: spec.limits.memoryBytes,
    Pids: spec.limits.pids,
  };
  // Only GPUs are reserved: CPU and memory are caps, overcommitted as on one engine (reserving
  // the 2 CPUs / 4 GB defaults would leave most workloads pending on small nodes).
  const reservations: Record<string, unknown> = {};
  if (spec.gpus > 0)
    reservations.GenericResources = [
      { DiscreteResourceSpec: { Kind: "NVIDIA-GPU", Value: spec.gpus } },
    ];
  return {
    Name: spec.name,
    Labels: labels,
    TaskTemplate: {
      ContainerSpec: containerSpec,
      Resources: { Limits: limits, Reservations: reservations } as Docker.ResourceRequirements,
      RestartPolicy: { Condition: "none", MaxAttempts: 0 },
      Placement: { Constraints: spec.gpus > 0 ? ["node.labels.gpu==true"] : [] },
      Networks: [{ Target: network }],
      LogDriver: {
        Name: "json-file",
        // JSON framing costs about 4x on short lines; past this the oldest output rotates out.
        Options: { "max-size": String(spec.limits.outputBytes * 8 + 1024 * 1024), "max-file": "2" },
      },
    },
    // One replica that is never restarted: a run-once task. Not `ReplicatedJob`: on Docker
    // 20.10 removing a job service orphans its task, and a timed-out job's container keeps
    // running (moby/moby#42789, #44312; measured in docs/broker.md). A replicated service's
    // removal stops and removes its container on whichever node it ran.
    Mode: { Replicated: { Replicas: 1 } },
  };
}

/**
 * Workloads as run-once Docker Swarm services, so they spread over the swarm's nodes
 * (GPU runs only on nodes labelled gpu=true). Files travel as swarm configs mounted read-only
 * under /workspace; each workload gets its own internal overlay network, which has no route
 * out and nobody else on it (a service with no network would land on the default bridge).
 */
export class SwarmExecutor implements Executor {
  readonly kind = "swarm" as const;
  private factsPromise: Promise<EngineFacts> | undefined;
  private readonly images: EngineExecutor;

  constructor(
    private readonly docker: Docker,
    options: SwarmExecutorOptions,
  ) {
    this.images = new EngineExecutor(docker, options);
  }

  facts(): Promise<EngineFacts> {
    this.factsPromise ??= engineFacts(this.docker)
      .then((facts) => {
        if (!facts.swarmManager || !facts.clusterId) {
          throw new ExecutorError(
            "executor_error",
            "The swarm backend needs a Docker engine that is a swarm manager",
          );
        }
        return { ...facts, engineId: facts.clusterId };
      })
      .catch((error) => {
        this.factsPromise = undefined;
        throw error;
      });
    return this.factsPromise;
  }

  prepareImage(image: string): Promise<PreparedImage> {
    // Checked on the manager; a worker without the image pulls it itself (or rejects the task).
    return this.images.prepareImage(image);
  }

  async run(
    spec: WorkloadSpec,
    signal: AbortSignal,
    ended?: (result: WorkloadResult) => Promise<void>,
  ): Promise<WorkloadResult> {
    const tooBig = spec.files.find((file) => file.data.length > SWARM_MAX_FILE_BYTES);
    if (tooBig) {
      throw new ExecutorError(
        "executor_error",
        `files: "${tooBig.path}" is larger than a swarm config holds (${SWARM_MAX_FILE_BYTES} bytes)`,
      );
    }
    const docker = this.docker;
    const configIds: string[] = [];
    let networkId: string | null = null;
    let service: Docker.Service | null = null;
    try {
      try {
        const network = await docker.createNetwork({
          Name: spec.name,
          Driver: "overlay",
          Internal: true,
          Attachable: false,
          CheckDuplicate: true,
          Labels: workloadLabels(spec, "network"),
        });
        networkId = network.id;
        const configs: { id: string; name: string; path: string; mode: number }[] = [];
        for (const [index, file] of spec.files.entries()) {
          const name = `${spec.name}-f${index}`;
          const created = (await docker.createConfig({
            Name: name,
            Labels: workloadLabels(spec, "files"),
            Data: file.data.toString("base64"),
          })) as {
            id?: string;
            ID?: string;
          };
          const id = created.id ?? created.ID ?? "";
          configIds.push(id);
          configs.push({ id, name, path: file.path, mode: file.mode });
        }
        service = await docker.createService(swarmServiceSpec(spec, networkId, configs));
      } catch (error) {
        if (error instanceof ExecutorError) throw error;
        throw new ExecutorError(
          "executor_error",
          `The swarm refused the workload: ${dockerMessage(error)}`,
          { cause: error },
        );
      }
      const result = await this.waitForTask(service, spec, signal);
      await ended?.(result);
      return result;
    } finally {
      await this.removeAll(service?.id ?? spec.name, networkId, configIds);
    }
  }

  private async waitForTask(
    service: Docker.Service,
    spec: WorkloadSpec,
    signal: AbortSignal,
  ): Promise<WorkloadResult> {
    const deadline = Date.now() + spec.timeoutSeconds * 1000;
    let task: SwarmTask | undefined;
    let timedOut = false;
    let removed = false;
    for (;;) {
      if (signal.aborted) break;
      if (Date.now() >= deadline) {
        timedOut = true;
        break;
      }
      let tasks: SwarmTask[];
      try {
        tasks = (await this.docker.listTasks({
          filters: { service: [service.id] },
        })) as SwarmTask[];
      } catch (error) {
        if (!isMissing(error)) throw error;
        removed = true;
        break;
      }
      if (tasks.length === 0 && (await this.serviceGone(service.id))) {
        removed = true;
        break;
      }
      task = latest(tasks);
      if (task && FINAL_STATES.has(task.Status?.State ?? "")) break;
      await sleep(Math.min(POLL_MS, Math.max(0, deadline - Date.now())));
    }
    const state = task?.Status?.State;
    // "rejected" (no node could take it) or "failed" without an exit ("starting container
    // failed: …") is Docker refusing the workload; a workload that ran and exited non-zero is not.
    const err = task?.Status?.Err ?? "";
    if (
      !timedOut &&
      !removed &&
      !signal.aborted &&
      (state === "rejected" || (state === "failed" && !err.startsWith("task: non-zero exit")))
    ) {
      throw new ExecutorError(
        "executor_error",
        `The swarm could not run the task: ${err || "no reason given"}`,
      );
    }
    const output = new OutputCapture(spec.limits.outputBytes);
    if (!removed) {
      try {
        const logs = (await service.logs({
          stdout: true,
          stderr: true,
          follow: false,
        })) as unknown as Buffer | NodeJS.ReadableStream;
        if (Buffer.isBuffer(logs)) output.write(logs);
        else for await (const chunk of logs) output.write(chunk as Buffer);
      } catch {
        // No logs (the task never started): the answer says so by being empty.
      }
    }
    let oomKilled = false;
    const containerId = task?.Status?.ContainerStatus?.ContainerID;
    if (containerId) {
      // Swarm does not report OOM; the container tells, when it ran on this node.
      try {
        oomKilled =
          (await this.docker.getContainer(containerId).inspect()).State.OOMKilled === true;
      } catch {
        // On another node, or gone.
      }
    }
    const exitCode = task?.Status?.ContainerStatus?.ExitCode;
    return {
      ...workloadOutput(output.result()),
      returncode:
        timedOut || removed || signal.aborted || (state !== "complete" && state !== "failed")
          ? null
          : (exitCode ?? null),
      timed_out: timedOut,
      oom_killed: oomKilled && !timedOut,
      removed: removed || signal.aborted,
    };
  }

  private async serviceGone(id: string): Promise<boolean> {
    try {
      await this.docker.getService(id).inspect();
      return false;
    } catch (error) {
      return isMissing(error);
    }
  }

  /** Remove the service, then its network and configs (in use until the task's container is gone). */
  private async removeAll(
    serviceId: string,
    networkId: string | null,
    configIds: string[],
  ): Promise<void> {
    await this.removeService(serviceId).catch(() => {});
    const pending: (() => Promise<unknown>)[] = [];
    if (networkId) {
      pending.push(async () => {
        await this.docker.getNetwork(networkId).remove();
        // The cluster forgets it at once; this node's copy goes a moment later. Done means gone.
        for (
          let i = 0;
          i < 50 && (await ignoreMissing(() => this.docker.getNetwork(networkId).inspect()));
          i++
        )
          await sleep(100);
      });
    }
    for (const id of configIds) pending.push(() => this.docker.getConfig(id).remove());
    for (let attempt = 0; attempt < 40 && pending.length; attempt++) {
      for (const action of pending.splice(0)) {
        try {
          await ignoreMissing(action);
        } catch {
          pending.push(action);
        }
      }
      if (pending.length) await sleep(250);
    }
  }

  async list(masterId: string, slug?: string): Promise<ManagedWorkload[]> {
    const services = (await this.docker.listServices({
      filters: { label: workloadFilters(masterId, slug, "run") },
    })) as unknown as SwarmService[];
    const out: ManagedWorkload[] = [];
    for (const info of services) {
      const tasks = await serviceTasks(this.docker, info.ID);
      const task = latest(tasks);
      const state = task?.Status?.State ?? "pending";
      const final = FINAL_STATES.has(state);
      const workload = workloadFromLabels(info.Spec?.Name ?? info.ID, info.Spec?.Labels, {
        image: (info.Spec?.TaskTemplate?.ContainerSpec?.Image ?? "").replace(
          /@sha256:[0-9a-f]+$/,
          "",
        ),
        state,
        running: !final,
        createdAt: new Date(info.CreatedAt ?? Date.now()),
        finishedAt: final && task?.Status?.Timestamp ? new Date(task.Status.Timestamp) : null,
      });
      // The filter asked Docker; the labels are checked again here before anything trusts them.
      if (workload && workload.masterId === masterId && (!slug || workload.slug === slug))
        out.push(workload);
    }
    return out;
  }

  async remove(name: string): Promise<boolean> {
    return this.removeService(name);
  }

  /**
   * Stop and remove a workload's service. Its task container is killed first where this node
   * can see it: swarm would take seconds to stop it, and removing a task container while
   * swarm is also tearing it down leaves a stale endpoint that keeps the overlay network
   * from ever being removed. Other nodes' agents stop their containers themselves.
   */
  private async removeService(nameOrId: string): Promise<boolean> {
    let id: string;
    try {
      id = ((await this.docker.getService(nameOrId).inspect()) as { ID: string }).ID;
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
    // A task being prepared or started gets its container after any removal issued now, and
    // swarm then forgets it ("Created", never removed): let it settle first (bounded).
    for (let i = 0; i < 100; i++) {
      const tasks = await serviceTasks(this.docker, id);
      if (!tasks.some((task) => SETTLING_STATES.has(task.Status?.State ?? ""))) break;
      await sleep(100);
    }
    const local = { all: true, filters: { label: [`com.docker.swarm.service.id=${id}`] } };
    const containers = await this.docker.listContainers(local).catch(() => []);
    for (const info of containers) {
      if (info.State !== "running") continue;
      const container = this.docker.getContainer(info.Id);
      await container.kill().catch(() => {});
      await container.wait().catch(() => {});
    }
    const removed = await ignoreMissing(() => this.docker.getService(id).remove());
    for (const info of containers) {
      await ignoreMissing(() => this.docker.getContainer(info.Id).remove({ force: true })).catch(
        () => {},
      );
    }
    return removed;
  }

  async leftovers(masterId: string): Promise<ManagedLeftover[]> {
    const out: ManagedLeftover[] = [];
    // Task containers on this node whose service is gone (swarm left them behind).
    const services = new Set(
      (
        (await this.docker.listServices({
          filters: { label: workloadFilters(masterId) },
        })) as unknown as SwarmService[]
      ).map((s) => s.ID),
    );
    const tasks = await this.docker.listContainers({
      all: true,
      filters: { label: workloadFilters(masterId, undefined, "run") },
    });
    for (const info of tasks) {
      const service = info.Labels?.["com.docker.swarm.service.id"];
      if (!service || services.has(service) || info.Labels?.[PLATFORM_LABELS.master] !== masterId)
        continue;
      out.push({
        kind: "container",
        id: info.Id,
        workload: info.Labels?.["com.docker.swarm.service.name"] ?? "",
      });
    }
    const networks = await this.docker.listNetworks({
      filters: { label: workloadFilters(masterId, undefined, "network") },
    });
    for (const network of networks) {
      if (network.Labels?.[PLATFORM_LABELS.master] === masterId)
        out.push({ kind: "network", id: network.Id, workload: network.Name });
    }
    const configs = (await this.docker.listConfigs({
      filters: { label: workloadFilters(masterId, undefined, "files") },
    })) as {
      ID: string;
      Spec?: { Name?: string; Labels?: Record<string, string> };
    }[];
    for (const config of configs) {
      if (config.Spec?.Labels?.[PLATFORM_LABELS.master] === masterId) {
        out.push({
          kind: "config",
          id: config.ID,
          workload: (config.Spec.Name ?? "").replace(/-f\d+$/, ""),
        });
      }
    }
    return out;
  }

  async removeLeftover(leftover: ManagedLeftover): Promise<void> {
    if (leftover.kind === "container") {
      await ignoreMissing(() => this.docker.getContainer(leftover.id).remove({ force: true }));
    } else if (leftover.kind === "network")
      await ignoreMissing(() => this.docker.getNetwork(leftover.id).remove());
    else if (leftover.kind === "config")
      await ignoreMissing(() => this.docker.getConfig(leftover.id).remove());
  }
}
