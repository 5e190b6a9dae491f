import { isConflict, isMissing, PLATFORM_LABELS } from "@platform/challenge-sdk/sandbox";
import type Docker from "dockerode";
import { challengeContainerName, PORT_LABEL } from "../runtime/challenge-containers.js";
import { type SwarmTask, serviceTasks } from "../swarm/swarm-tasks.js";
import { ReadyzHealthchecks } from "./readyz-healthcheck.js";

/** The label carrying the registry's image reference a service was pinned from. */
export const IMAGE_LABEL = "platform.image";
/** `platform.runtime` of a challenge service's task containers (not a plain challenge container). */
export const TASK_RUNTIME = "challenge-task";

/** A challenge's service as `docker service inspect` answers (the fields the master reads). */
export interface ChallengeService {
  ID: string;
  Version: { Index: number };
  Spec: Docker.CreateServiceOptions & {
    Labels?: Record<string, string>;
    Mode?: { Replicated?: { Replicas?: number } };
    TaskTemplate?: { ContainerSpec?: { Image?: string }; ForceUpdate?: number };
  };
  UpdateStatus?: { State?: string; Message?: string; StartedAt?: string; CompletedAt?: string };
}

/** How the master reaches a service: its DNS name on the network, or a task's node address. */
export type SwarmAddressMode = "dns" | "task";

/**
 * What the reconciler reads from and does to a swarm for challenge services, by name
 * (`platform-challenge-<slug>`, as on the engine backend): the Swarm counterpart of EngineView.
 */
export class SwarmServices {
  /** The /readyz check each service's tasks run, per image. */
  readonly healthchecks: ReadyzHealthchecks;

  constructor(
    private readonly docker: Docker,
    private readonly network: string,
    private readonly addressMode: SwarmAddressMode,
  ) {
    this.healthchecks = new ReadyzHealthchecks(docker);
  }

  /** The challenge's service, or null when there is none. */
  async inspect(slug: string): Promise<ChallengeService | null> {
    try {
      return (await this.docker
        .getService(challengeContainerName(slug))
        .inspect()) as ChallengeService;
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  async create(spec: Docker.CreateServiceOptions): Promise<string> {
    const created = (await this.docker.createService(spec)) as { id?: string; ID?: string };
    return created.id ?? created.ID ?? "";
  }

  /** Replace the service's spec (Swarm rolls its tasks by the spec's UpdateConfig). */
  async update(service: ChallengeService, spec: Docker.CreateServiceOptions): Promise<void> {
    await this.docker
      .getService(service.ID)
      .update({ ...spec, version: service.Version.Index } as never);
  }

  /** Replace every task of the service with a fresh one from the same spec (an operator's restart). */
  async forceRestart(service: ChallengeService): Promise<void> {
    const template = service.Spec.TaskTemplate ?? {};
    await this.update(service, {
      ...service.Spec,
      TaskTemplate: { ...template, ForceUpdate: (template.ForceUpdate ?? 0) + 1 },
    } as Docker.CreateServiceOptions);
  }

  /** Remove a service (Swarm stops its tasks); gone is fine. */
  async remove(id: string): Promise<void> {
    try {
      await this.docker.getService(id).remove();
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
  }

  tasks(service: ChallengeService): Promise<SwarmTask[]> {
    return serviceTasks(this.docker, service.ID);
  }

  /** Slugs and ids of the challenge services `instanceId` (this deployment) owns. */
  async owned(instanceId: string): Promise<{ slug: string; id: string }[]> {
    const services = (await this.docker.listServices({
      filters: {
        label: [`${PLATFORM_LABELS.runtime}=challenge`, `${PLATFORM_LABELS.master}=${instanceId}`],
      },
    })) as unknown as ChallengeService[];
    return services
      .filter((s) => s.Spec.Labels?.[PLATFORM_LABELS.master] === instanceId)
      .map((s) => ({ slug: s.Spec.Labels?.[PLATFORM_LABELS.challenge] ?? "", id: s.ID }));
  }

  /** This node's id in the swarm (where a challenge with volumes is placed). */
  async nodeId(): Promise<string> {
    const info = (await this.docker.info()) as { Swarm?: { NodeID?: string } };
    return info.Swarm?.NodeID ?? "";
  }

  /** Throws, saying so, when the engine is not a manager of a swarm (no service can be run). */
  async assertManager(): Promise<void> {
    const info = (await this.docker.info()) as { Swarm?: { ControlAvailable?: boolean } };
    if (!info.Swarm?.ControlAvailable)
      throw new Error(
        "PLATFORM_CHALLENGE_BACKEND=swarm needs a Docker engine that is a swarm manager",
      );
  }

  /**
   * The network services join: an attachable overlay, created when missing. A network of that
   * name that is not swarm-scoped (the engine backend's bridge) is refused: services cannot join it.
   */
  async ensureNetwork(): Promise<string> {
    const existing = await this.inspectNetwork();
    if (existing) return existing;
    try {
      await this.docker.createNetwork({
        Name: this.network,
        Driver: "overlay",
        Attachable: true,
        CheckDuplicate: true,
        Labels: { [PLATFORM_LABELS.runtime]: "network" },
      });
    } catch (error) {
      if (!isConflict(error)) throw error;
    }
    return (await this.inspectNetwork()) ?? this.network;
  }

  private async inspectNetwork(): Promise<string | null> {
    let info: { Id: string; Scope?: string; Driver?: string };
    try {
      info = await this.docker.getNetwork(this.network).inspect();
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
    if (info.Scope !== "swarm")
      throw new Error(
        `The network ${this.network} is a ${info.Scope ?? "local"} ${info.Driver ?? ""} network: Swarm services need an attachable overlay network (remove it, or set PLATFORM_DOCKER_NETWORK to another name)`,
      );
    return info.Id;
  }

  /**
   * Where the master sends the challenge's requests: `http://<service>:<port>` on the network
   * (Docker's DNS answers with the running tasks' addresses), or in "task" mode a running task
   * of this node at its docker_gwbridge address; null when no task of this node runs.
   */
  async address(service: ChallengeService, running: SwarmTask[]): Promise<string | null> {
    const port = service.Spec.Labels?.[PORT_LABEL];
    if (!port) return null;
    if (this.addressMode === "dns") return `http://${service.Spec.Name}:${port}`;
    const gateway = (await this.docker
      .getNetwork("docker_gwbridge")
      .inspect()
      .catch(() => null)) as { Containers?: Record<string, { IPv4Address?: string }> } | null;
    for (const task of running) {
      const id = task.Status?.ContainerStatus?.ContainerID;
      const address = id ? gateway?.Containers?.[id]?.IPv4Address?.split("/")[0] : undefined;
      if (address) return `http://${address}:${port}`;
    }
    return null;
  }
}
