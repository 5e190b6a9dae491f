import {
  dockerMessage,
  ensureImage,
  ignoreMissing,
  isConflict,
  isMissing,
  localImage,
  PLATFORM_LABELS,
  pullImage,
  pullProgress,
  SandboxRefusal,
  serviceContainerOptions,
} from "@platform/challenge-sdk/sandbox";
import {
  HttpError,
  type Logger,
  type RuntimeOperationResponse,
  type SseEvent,
} from "@platform/core";
import type Docker from "dockerode";
import type { MasterConfig } from "../config.js";
import type { ChallengeRow } from "../registry/challenge-row.js";
import type { ChallengeStore } from "../registry/challenge-store.js";
import { serviceTasks } from "../swarm/swarm-tasks.js";

/** The port a challenge listens on when neither its metadata nor its image says. */
export const DEFAULT_CHALLENGE_PORT = 8080;

/** What {@link ChallengeContainers} is built from. */
export interface ChallengeContainersOptions {
  docker: Docker;
  config: MasterConfig;
  store: ChallengeStore;
  log: Logger;
  /** The deployment id (`platform.master` label), shared with the broker. */
  instanceId: () => Promise<string>;
  /** Can GPU containers run here? */
  gpuHost: () => Promise<boolean>;
}

/** How {@link ChallengeContainers.restart} builds the container, beyond the registry record. */
export interface RestartOptions {
  /** The image reference to run (the reconciler's pinned digest); default the record's image. */
  image?: string;
  /** Labels added to the platform's own (the reconciler's spec fingerprint). */
  labels?: Record<string, string>;
  /**
   * The container's name; default `platform-challenge-<slug>`. An update starts the new
   * container under another name, beside the old one (reconciler/rolling-update.ts).
   */
  name?: string;
  /** Point the registry's internal_base_url at it (default true; an update does that itself once it is ready). */
  publish?: boolean;
}

/** The label that carries the port a challenge container listens on. */
export const PORT_LABEL = "platform.port";

/** The container name of a challenge's service. */
export function challengeContainerName(slug: string): string {
  return `platform-challenge-${slug}`;
}

function answer(
  row: ChallengeRow,
  operation: string,
  status: string,
  detail: string | null,
): RuntimeOperationResponse {
  return { slug: row.slug, operation, status, detail };
}

/** A failed operation: 502 with the RuntimeOperationResponse fields beside `code`. */
function failed(
  row: ChallengeRow,
  operation: string,
  detail: string,
  status = 502,
  code = "runtime_failed",
): HttpError {
  return new HttpError(status, code, detail, {
    extra: { slug: row.slug, operation, status: "failed" },
  });
}

/**
 * The master's challenge runtime: pulls, (re)starts and inspects each challenge's own service
 * container, `platform-challenge-<slug>`, on the master's Docker engine (not to be confused
 * with the SDK's `ChallengeRuntime`, what a challenge's code sees of itself). The container
 * is built by the SDK sandbox's `serviceContainerOptions` and joins a user-defined bridge
 * network so the master reaches it by address; its tokens come from the registry through the
 * master key. It carries `platform.runtime`, never `platform.managed`: the broker's reaper
 * leaves it alone.
 */
export class ChallengeContainers {
  constructor(private readonly options: ChallengeContainersOptions) {}

  /** The deployment id (`platform.master` label) the containers carry. */
  instanceId = (): Promise<string> => this.options.instanceId();

  /** The engine challenge containers run on (the reconciler reads it too). */
  get docker(): Docker {
    return this.options.docker;
  }

  /** Docker's progress while pulling the challenge's image, then one `result` event. */
  async *pullEvents(row: ChallengeRow, signal: AbortSignal): AsyncGenerator<SseEvent> {
    let result: RuntimeOperationResponse;
    try {
      for await (const progress of pullProgress(this.docker, row.image, {
        timeoutMs: this.options.config.broker.pullTimeoutMs,
        signal,
      })) {
        yield { event: "progress", data: progress };
      }
      result = answer(row, "pull", "pulled", `Pulled ${row.image}`);
    } catch (error) {
      result = await this.pullFallback(row, error);
    }
    yield { event: "result", data: result };
  }

  /** Pull the challenge's image: "pulled", or "local" when only the engine's copy is there. */
  async pull(row: ChallengeRow, signal?: AbortSignal): Promise<RuntimeOperationResponse> {
    try {
      await pullImage(this.docker, row.image, {
        timeoutMs: this.options.config.broker.pullTimeoutMs,
        signal,
      });
      return answer(row, "pull", "pulled", `Pulled ${row.image}`);
    } catch (error) {
      const result = await this.pullFallback(row, error);
      if (result.status === "failed") throw failed(row, "pull", result.detail ?? "pull failed");
      return result;
    }
  }

  private async pullFallback(row: ChallengeRow, error: unknown): Promise<RuntimeOperationResponse> {
    // pullImage rejects with a one-line reason.
    const reason = (error as Error).message;
    const local = await localImage(this.docker, row.image).catch(() => null);
    if (local)
      return answer(
        row,
        "pull",
        "local",
        `${row.image} could not be pulled (${reason}); the engine's local copy will be used`,
      );
    return answer(
      row,
      "pull",
      "failed",
      `${row.image} could not be pulled and is not on the engine: ${reason}`,
    );
  }

  /** Create or replace the challenge's container from its registry record, and record its address. */
  async restart(
    row: ChallengeRow,
    options: RestartOptions = {},
  ): Promise<RuntimeOperationResponse> {
    const docker = this.docker;
    const name = options.name ?? challengeContainerName(row.slug);
    const instanceId = await this.options.instanceId();
    const reference = options.image ?? row.image;
    let image: Docker.ImageInspectInfo;
    try {
      image = await ensureImage(docker, reference, {
        pull: true,
        timeoutMs: this.options.config.broker.pullTimeoutMs,
      });
    } catch (error) {
      if (error instanceof SandboxRefusal) throw failed(row, "restart", error.message);
      throw error;
    }
    const resources = row.resources as {
      cpus?: number;
      memory_mb?: number;
      gpus?: number;
      pids_limit?: number;
    };
    if ((resources.gpus ?? 0) > 0 && !(await this.options.gpuHost())) {
      throw failed(
        row,
        "restart",
        `The challenge asks for ${resources.gpus} GPU(s) and this master has no GPU host`,
        400,
        "gpu_unavailable",
      );
    }
    const network = await this.ensureNetwork();
    const existing = await docker
      .getContainer(name)
      .inspect()
      .catch((error) => {
        if (isMissing(error)) return null;
        throw error;
      });
    if (existing && existing.Config.Labels?.[PLATFORM_LABELS.master] !== instanceId) {
      throw failed(
        row,
        "restart",
        `A container named ${name} exists and does not belong to this master; remove it first`,
        409,
        "container_conflict",
      );
    }
    if (existing) await ignoreMissing(() => docker.getContainer(name).remove({ force: true }));

    const port = challengePort(row, image);
    const env = this.environment(row, port);
    let container: Docker.Container;
    try {
      container = await docker.createContainer(
        serviceContainerOptions({
          name,
          image: reference,
          env,
          labels: {
            ...options.labels,
            [PLATFORM_LABELS.runtime]: "challenge",
            [PLATFORM_LABELS.challenge]: row.slug,
            [PLATFORM_LABELS.master]: instanceId,
            [PORT_LABEL]: String(port),
          },
          network,
          volumes: challengeVolumes(row),
          ...(resources.cpus ? { cpus: resources.cpus } : {}),
          ...(resources.memory_mb ? { memoryMb: resources.memory_mb } : {}),
          ...(resources.pids_limit ? { pids: resources.pids_limit } : {}),
          ...(resources.gpus ? { gpus: resources.gpus } : {}),
        }),
      );
      await container.start();
    } catch (error) {
      await ignoreMissing(() => docker.getContainer(name).remove({ force: true })).catch(() => {});
      throw failed(row, "restart", `Docker could not start ${name}: ${dockerMessage(error)}`);
    }
    const address = (await container.inspect()).NetworkSettings.Networks[network]?.IPAddress;
    if (!address)
      throw failed(row, "restart", `${name} started without an address on network ${network}`);
    const url = `http://${address}:${port}`;
    if (options.publish !== false)
      await this.options.store.update(row.slug, { internal_base_url: url });
    this.options.log.info("challenge container started", { slug: row.slug, container: name, url });
    return answer(row, "restart", "running", `Started ${name} from ${reference} at ${url}`);
  }

  /**
   * The challenge's environment: PORT, its env and secrets (as variables: what the SDK reads),
   * then what the master sets and no record may override (its tokens, slug and the master's URL).
   * The Swarm backend gives its services the same.
   */
  environment(row: ChallengeRow, port: number): Record<string, string> {
    return {
      PORT: String(port),
      ...row.env,
      ...row.secrets,
      CHALLENGE_TOKEN: this.options.store.challengeToken(row),
      BROKER_TOKEN: this.options.store.brokerToken(row),
      PLATFORM_CHALLENGE_SLUG: row.slug,
      PLATFORM_MASTER_URL: this.masterUrl(),
    };
  }

  /** running / exited / … / missing, with health: Docker's HEALTHCHECK, else GET {internal_base_url}/health. */
  async status(row: ChallengeRow): Promise<RuntimeOperationResponse> {
    if (this.options.config.reconciler.backend === "swarm") return this.serviceStatus(row);
    const name = challengeContainerName(row.slug);
    let info: Docker.ContainerInspectInfo;
    try {
      info = await this.docker.getContainer(name).inspect();
    } catch (error) {
      if (isMissing(error)) return answer(row, "status", "missing", `No container ${name}`);
      throw error;
    }
    const state = info.State;
    if (state.Status !== "running") {
      const detail =
        state.Status === "exited"
          ? `Exited with code ${state.ExitCode} at ${state.FinishedAt}`
          : `Container is ${state.Status}`;
      return answer(
        row,
        "status",
        state.Status,
        `${detail}${state.OOMKilled ? " (out of memory)" : ""}`,
      );
    }
    const health = state.Health?.Status
      ? `health: ${state.Health.Status} (docker healthcheck)`
      : `health: ${await this.probe(row.internal_base_url)}`;
    return answer(
      row,
      "status",
      "running",
      `${health}; started ${state.StartedAt}; image ${info.Config.Image}`,
    );
  }

  /** On the Swarm backend: the challenge's service, its running tasks and Swarm's update state. */
  private async serviceStatus(row: ChallengeRow): Promise<RuntimeOperationResponse> {
    const name = challengeContainerName(row.slug);
    let service: {
      ID: string;
      Spec?: { Mode?: { Replicated?: { Replicas?: number } } };
      UpdateStatus?: { State?: string; Message?: string };
    };
    try {
      service = await this.docker.getService(name).inspect();
    } catch (error) {
      if (isMissing(error)) return answer(row, "status", "missing", `No service ${name}`);
      throw error;
    }
    const tasks = await serviceTasks(this.docker, service.ID);
    const running = tasks.filter(
      (t) => t.Status?.State === "running" && t.DesiredState === "running",
    ).length;
    const replicas = service.Spec?.Mode?.Replicated?.Replicas ?? 1;
    const update = service.UpdateStatus?.State
      ? `; update ${service.UpdateStatus.State}: ${service.UpdateStatus.Message ?? ""}`
      : "";
    return answer(
      row,
      "status",
      running > 0 ? "running" : "starting",
      `service ${name}: ${running}/${replicas} task(s) running; health: ${await this.probe(row.internal_base_url)}${update}`,
    );
  }

  private async probe(baseUrl: string | null): Promise<string> {
    if (!baseUrl) return "unknown (no internal_base_url)";
    try {
      const response = await fetch(new URL("/health", baseUrl), {
        signal: AbortSignal.timeout(2_000),
        redirect: "manual",
      });
      await response.body?.cancel();
      return response.ok
        ? `ok (GET /health ${response.status})`
        : `failing (GET /health ${response.status})`;
    } catch (error) {
      return `unreachable (${(error as Error).name === "TimeoutError" ? "no answer within 2 s" : (error as Error).message})`;
    }
  }

  // The broker is on the admin listener, so that is the master a challenge needs.
  private masterUrl(): string {
    return (
      this.options.config.broker.masterUrl ??
      `http://host.docker.internal:${this.options.config.adminPort}`
    );
  }

  /**
   * The user-defined bridge network challenge containers join, created once. Single-flight:
   * Docker's duplicate check is best effort, and two concurrent creates made two networks of
   * one name (then every start failed with "network is ambiguous").
   */
  private ensureNetwork(): Promise<string> {
    this.networkInFlight ??= this.createNetworkIfMissing().finally(() => {
      this.networkInFlight = undefined;
    });
    return this.networkInFlight;
  }

  private networkInFlight: Promise<string> | undefined;

  private async createNetworkIfMissing(): Promise<string> {
    const name = this.options.config.broker.dockerNetwork;
    try {
      await this.docker.getNetwork(name).inspect();
      return name;
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
    try {
      await this.docker.createNetwork({
        Name: name,
        Driver: "bridge",
        CheckDuplicate: true,
        Labels: { [PLATFORM_LABELS.runtime]: "network" },
      });
    } catch (error) {
      // Another restart created it first.
      if (!isConflict(error)) throw error;
    }
    return name;
  }
}

/** The challenge's named volumes, prefixed with its slug so one challenge never mounts another's. */
export function challengeVolumes(row: ChallengeRow): { source: string; target: string }[] {
  return Object.entries(row.volumes).map(([volume, target]) => ({
    source: `platform-${row.slug}-${volume}`,
    target,
  }));
}

/** The challenge's port: metadata.port, else the image's first exposed TCP port, else 8080. */
export function challengePort(row: ChallengeRow, image: Docker.ImageInspectInfo): number {
  const fromMetadata = Number(row.metadata.port);
  if (Number.isInteger(fromMetadata) && fromMetadata > 0 && fromMetadata < 65_536)
    return fromMetadata;
  for (const key of Object.keys(image.Config?.ExposedPorts ?? {})) {
    const [port, protocol] = key.split("/");
    if ((protocol ?? "tcp") === "tcp" && Number(port) > 0) return Number(port);
  }
  return DEFAULT_CHALLENGE_PORT;
}
