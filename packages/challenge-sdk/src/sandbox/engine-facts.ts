import type Docker from "dockerode";
import { dockerMessage } from "./docker-errors.js";

/** What `docker info` says that the runners decide on. */
export interface EngineFacts {
  /** The engine's id (`docker info` ID). */
  engineId: string;
  /** The swarm's cluster id, when the engine is in one. */
  clusterId: string | null;
  /** The engine is a swarm manager that can create services. */
  swarmManager: boolean;
  /** An nvidia runtime is registered: GPU tasks can run here. */
  nvidia: boolean;
}

/**
 * The engine's facts, read once from `docker info`.
 * @example if (!(await engineFacts(docker)).nvidia) refuseGpuTasks();
 */
export async function engineFacts(docker: Docker): Promise<EngineFacts> {
  const info = await docker.info();
  const swarm = info.Swarm ?? {};
  return {
    engineId: String(info.ID ?? info.Name ?? "unknown"),
    clusterId: swarm.Cluster?.ID ?? null,
    swarmManager: swarm.LocalNodeState === "active" && swarm.ControlAvailable === true,
    nvidia: Object.keys(info.Runtimes ?? {}).includes("nvidia"),
  };
}

/**
 * Can a Docker engine be reached within `timeoutMs`? Its facts, or why not (never throws).
 * @example const probe = await probeDocker(new Docker()); if (!probe.ok) console.warn(probe.reason);
 */
export async function probeDocker(
  docker: Docker,
  timeoutMs = 3_000,
): Promise<{ ok: true; facts: EngineFacts } | { ok: false; reason: string }> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const facts = await Promise.race([
      engineFacts(docker),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { ok: true, facts };
  } catch (error) {
    return { ok: false, reason: dockerMessage(error) };
  } finally {
    clearTimeout(timer);
  }
}
