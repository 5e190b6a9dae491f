import type Docker from "dockerode";

/** What a challenge's Swarm service is built from (swarm-services.ts gathers it). */
export interface ChallengeServiceInput {
  /** `platform-challenge-<slug>`, the same name its container has on the engine backend. */
  name: string;
  /** Pinned to content (desired-state.ts). */
  image: string;
  env: Record<string, string>;
  /** The platform's labels and the spec fingerprint, on the service. */
  labels: Record<string, string>;
  /** The labels of its task containers (not a plain challenge container's: EngineView.owned skips them). */
  taskLabels: Record<string, string>;
  /** The overlay network the service joins (id or name). */
  network: string;
  replicas: number;
  /** Named volumes (`platform-<slug>-<name>`) and where they are mounted. */
  volumes: readonly { source: string; target: string }[];
  resources: { cpus?: number; memory_mb?: number; gpus?: number; pids_limit?: number };
  /** The check on the challenge's /readyz, or undefined to keep the image's own (if any). */
  healthcheck?: Docker.HealthConfig | undefined;
  /** Placement on one node (the one whose volumes hold the challenge's data), when set. */
  nodeId?: string | null;
  /** How long Swarm watches a new task before it calls an update a success (seconds). */
  monitorSeconds: number;
}

/** The pids cap of a service that does not set one (as serviceContainerOptions does). */
const SERVICE_PIDS = 4096;
/** /tmp's size: capped scratch space, as on the engine. */
const TMP_BYTES = 64 * 1024 * 1024;
const SECOND_NS = 1_000_000_000;

/**
 * A challenge's Swarm service: the container path's lock-down where Swarm can express it (every
 * capability dropped, init, a capped /tmp, a pids cap, json-file logs capped at 3 x 10 MB), the
 * same environment and volumes, `endpoint_mode: dnsrr` (no virtual IP: it needs IPVS) and no
 * published port (the master reaches it on the network), restarted whenever it exits, and updated one
 * task at a time, new before old, rolled back by Swarm itself when the new task fails.
 */
export function challengeServiceSpec(input: ChallengeServiceInput): Docker.CreateServiceOptions {
  const { resources } = input;
  const containerSpec: Docker.ContainerSpec = {
    Image: input.image,
    Labels: input.taskLabels,
    Env: Object.entries(input.env).map(([key, value]) => `${key}=${value}`),
    Init: true,
    CapabilityDrop: ["ALL"],
    Mounts: [
      {
        Type: "tmpfs",
        Target: "/tmp",
        TmpfsOptions: { SizeBytes: TMP_BYTES, Mode: 0o1777 },
      } as Docker.MountSettings,
      ...input.volumes.map(
        ({ source, target }) =>
          ({ Type: "volume", Source: source, Target: target }) as Docker.MountSettings,
      ),
    ],
    StopGracePeriod: 10 * SECOND_NS,
  };
  // Docker's field is Healthcheck; it reads JSON names case-insensitively, so dockerode's name works.
  if (input.healthcheck) containerSpec.HealthCheck = input.healthcheck;
  const limits: Record<string, number> = { Pids: resources.pids_limit ?? SERVICE_PIDS };
  if (resources.cpus) limits.NanoCPUs = Math.round(resources.cpus * 1e9);
  if (resources.memory_mb) limits.MemoryBytes = resources.memory_mb * 1024 * 1024;
  const reservations: Record<string, unknown> = {};
  const constraints: string[] = [];
  if (resources.gpus) {
    reservations.GenericResources = [
      { DiscreteResourceSpec: { Kind: "NVIDIA-GPU", Value: resources.gpus } },
    ];
    constraints.push("node.labels.gpu==true");
  }
  if (input.nodeId) constraints.push(`node.id==${input.nodeId}`);
  const monitor = input.monitorSeconds * SECOND_NS;
  return {
    Name: input.name,
    Labels: input.labels,
    TaskTemplate: {
      ContainerSpec: containerSpec,
      Resources: { Limits: limits, Reservations: reservations } as Docker.ResourceRequirements,
      // "any", as the container's unless-stopped: a server that exits 0 is down all the same.
      RestartPolicy: { Condition: "any", Delay: SECOND_NS },
      Placement: { Constraints: constraints },
      Networks: [{ Target: input.network }],
      LogDriver: { Name: "json-file", Options: { "max-size": "10m", "max-file": "3" } },
    },
    Mode: { Replicated: { Replicas: input.replicas } },
    UpdateConfig: {
      Parallelism: 1,
      Order: "start-first",
      FailureAction: "rollback",
      Monitor: monitor,
      MaxFailureRatio: 0,
    },
    RollbackConfig: {
      Parallelism: 1,
      Order: "start-first",
      FailureAction: "pause",
      Monitor: monitor,
    },
    EndpointSpec: { Mode: "dnsrr" },
  };
}
