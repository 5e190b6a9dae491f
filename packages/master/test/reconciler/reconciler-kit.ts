// What the reconciler's suites share: fast settings, reading a challenge's runtime state and
// events through the admin API, and writing into a challenge's named volume on the real engine.
import type Docker from "dockerode";
import type { MasterConfig } from "../../src/config.js";
import type { ChallengeRuntimeView } from "../../src/reconciler/reconciler-view.js";
import { challengeContainerName } from "../../src/runtime/challenge-containers.js";
import { eventually, IMAGES } from "../broker/docker-test-env.js";

/** Reconciler settings for tests: a pass a second, short grace and backoff; challenges as containers by default. */
export function fastReconciler(
  config: MasterConfig,
  network: string,
  backend: MasterConfig["reconciler"]["backend"] = "engine",
): void {
  config.broker.dockerNetwork = network;
  config.broker.masterUrl = "http://master.test:8080";
  config.reconciler = {
    enabled: true,
    intervalSeconds: 1,
    leaseSeconds: 3,
    backoffSeconds: 1,
    backoffMaxSeconds: 4,
    startGraceSeconds: 1,
    unhealthyAfter: 1,
    updateReadySeconds: 8,
    drainSeconds: 5,
    backend,
    // The test process runs outside the swarm: it reaches a task at its node address.
    swarmAddress: "task",
  };
}

/** A runtime event as GET …/runtime lists it. */
export interface RuntimeEventView {
  kind: string;
  detail: Record<string, unknown>;
  created_at: string;
}

type AdminFetch = (path: string, init?: RequestInit) => Promise<Response>;

/** A challenge's reconciler state and events (newest first), read through the admin API. */
export async function runtimeOf(
  adminFetch: AdminFetch,
  admin: Record<string, string>,
  slug: string,
): Promise<{ runtime: ChallengeRuntimeView; events: RuntimeEventView[] }> {
  const response = await adminFetch(`/v1/admin/challenges/${slug}/runtime`, { headers: admin });
  if (response.status !== 200) throw new Error(`runtime of ${slug}: ${response.status}`);
  return (await response.json()) as { runtime: ChallengeRuntimeView; events: RuntimeEventView[] };
}

/** Wait until the reconciler reports `slug` as `observed`; the state then. */
export async function untilObserved(
  adminFetch: AdminFetch,
  admin: Record<string, string>,
  slug: string,
  observed: string,
  timeoutMs = 20_000,
): Promise<ChallengeRuntimeView> {
  let last: ChallengeRuntimeView | undefined;
  try {
    await eventually(
      async () => {
        last = (await runtimeOf(adminFetch, admin, slug)).runtime;
        return last.observed === observed;
      },
      timeoutMs,
      `${slug} to be ${observed}`,
    );
  } catch (error) {
    throw new Error(`${(error as Error).message} (last: ${JSON.stringify(last)})`);
  }
  return last!;
}

/** The challenge's container, or null. */
export function containerOf(docker: Docker, slug: string) {
  return docker
    .getContainer(challengeContainerName(slug))
    .inspect()
    .catch(() => null);
}

/** Run `script` as root in a plain container with the named volume at /vol. */
export async function inVolume(docker: Docker, volume: string, script: string): Promise<void> {
  const container = await docker.createContainer({
    Image: IMAGES.busybox,
    Cmd: ["sh", "-c", script],
    Labels: { "platform.test": "control" },
    HostConfig: { Mounts: [{ Type: "volume", Source: volume, Target: "/vol" }] },
  });
  try {
    await container.start();
    const { StatusCode } = (await container.wait()) as { StatusCode: number };
    if (StatusCode !== 0) throw new Error(`${script} exited with ${StatusCode}`);
  } finally {
    await container.remove({ force: true });
  }
}
