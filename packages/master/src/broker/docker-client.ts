import Docker from "dockerode";
import type { EngineFacts } from "./executor.js";

/**
 * A Docker client configured the way the docker CLI is: DOCKER_HOST (unix socket, tcp with
 * DOCKER_TLS_VERIFY / DOCKER_CERT_PATH, ssh), else the local socket.
 */
export function createDockerClient(): Docker {
  return new Docker();
}

/** The HTTP status Docker answered with, when `error` came from the Engine API. */
export function dockerStatus(error: unknown): number | undefined {
  const status = (error as { statusCode?: unknown })?.statusCode;
  return typeof status === "number" ? status : undefined;
}

/** Docker's own message for a refused API call, without dockerode's "(HTTP code …)" wrapping. */
export function dockerMessage(error: unknown): string {
  const json = (error as { json?: { message?: unknown } })?.json;
  if (json && typeof json.message === "string") return json.message;
  const reason = (error as { reason?: unknown })?.reason;
  const message = error instanceof Error ? error.message : String(error);
  return typeof reason === "string" && message.includes("(HTTP code")
    ? `${reason}: ${message.replace(/^\(HTTP code \d+\)\s*/, "")}`
    : message;
}

/** Run `action` and treat "no such object" (404) as done; true when something was there. */
export async function ignoreMissing(action: () => Promise<unknown>): Promise<boolean> {
  try {
    await action();
    return true;
  } catch (error) {
    if (dockerStatus(error) === 404) return false;
    throw error;
  }
}

/** What `docker info` says: the engine's id, whether it manages a swarm, and GPU support. */
export async function engineFacts(
  docker: Docker,
): Promise<EngineFacts & { clusterId: string | null }> {
  const info = await docker.info();
  const swarm = info.Swarm ?? {};
  const clusterId: string | null = swarm.Cluster?.ID ?? null;
  return {
    engineId: String(info.ID ?? info.Name ?? "unknown"),
    clusterId,
    swarmManager: swarm.LocalNodeState === "active" && swarm.ControlAvailable === true,
    nvidia: Object.keys(info.Runtimes ?? {}).includes("nvidia"),
  };
}

/** Can a Docker engine be reached? Resolves with its facts, or null with the reason. */
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
