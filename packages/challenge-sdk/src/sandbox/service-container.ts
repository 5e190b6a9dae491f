import type Docker from "dockerode";
import * as host from "./_host-config.js";
import { HARDENED_LIMITS } from "./task-limits.js";

/** A challenge's own long-running service container, as the master's runtime starts it. */
export interface ServiceContainerSpec {
  name: string;
  image: string;
  env: Record<string, string>;
  labels: Record<string, string>;
  /** The user-defined bridge network it joins (the master reaches it there). */
  network: string;
  /** Named volumes and where they are mounted. */
  volumes: readonly { source: string; target: string }[];
  /** Unset: uncapped (the operator sized the host for the challenge). */
  cpus?: number;
  memoryMb?: number;
  /** Default 4096. */
  pids?: number;
  gpus?: number;
}

/** The pids cap of a service that does not set one: generous, but a fork bomb still stops. */
const SERVICE_PIDS = 4096;

/**
 * The dockerode create options of a challenge's service: the task sandbox's lock-down (every
 * capability dropped, no-new-privileges, init, a capped noexec /tmp, swap = memory) without
 * what a service cannot live without: it joins `network`, its root stays writable (it is the
 * operator's code, writing where its image says), it restarts unless stopped, and it logs to
 * json-file capped at 3 x 10 MB. `host.docker.internal` maps to the host gateway, where the
 * master listens by default.
 * @example docker.createContainer(serviceContainerOptions({ name, image, env, labels, network, volumes: [] }))
 */
export function serviceContainerOptions(spec: ServiceContainerSpec): Docker.ContainerCreateOptions {
  const hostConfig: Docker.HostConfig = {
    NetworkMode: spec.network,
    RestartPolicy: { Name: "unless-stopped" },
    ...host.lockedDown(),
    PidsLimit: spec.pids ?? SERVICE_PIDS,
    Tmpfs: { "/tmp": host.scratchTmpfs(HARDENED_LIMITS.tmpfsMb * 1024 * 1024) },
    Mounts: spec.volumes.map(({ source, target }) => ({
      Type: "volume" as const,
      Source: source,
      Target: target,
    })),
    ExtraHosts: ["host.docker.internal:host-gateway"],
    LogConfig: { Type: "json-file", Config: { "max-size": "10m", "max-file": "3" } },
  };
  if (spec.cpus) hostConfig.NanoCpus = host.nanoCpus(spec.cpus);
  if (spec.memoryMb) Object.assign(hostConfig, host.memoryCap(spec.memoryMb * 1024 * 1024));
  if (spec.gpus) hostConfig.DeviceRequests = host.gpuRequests(spec.gpus);
  return {
    name: spec.name,
    Image: spec.image,
    Env: host.envList(spec.env),
    Labels: { ...spec.labels },
    HostConfig: hostConfig,
  };
}
