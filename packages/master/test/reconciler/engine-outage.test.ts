// The Docker engine out of reach for a while: the master reaches the engine through a TCP
// relay to its socket (DOCKER_HOST=tcp://…, as an operator's socket proxy would be), which the
// test stops and starts. Meanwhile the master stays up, /readyz says why it is not ready, and
// once the engine is back the reconciler brings back what went missing during the outage.
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { connect, createServer, type Server, type Socket } from "node:net";
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { challengeContainerName } from "../../src/runtime/challenge-containers.js";
import {
  brokerTestConfig,
  createChallenge,
  dockerForTests,
  eventually,
} from "../broker/docker-test-env.js";
import { startTestMaster, type TestMaster } from "../test-master.js";
import { containerOf, fastReconciler, runtimeOf, untilObserved } from "./reconciler-kit.js";

const env = await dockerForTests();
const SOCKET = "/var/run/docker.sock";

/** A TCP relay to the engine's socket that can be cut (every connection dropped) and restored. */
class EngineRelay {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  async start(): Promise<void> {
    const server = createServer((client) => {
      const engine = connect(SOCKET);
      for (const socket of [client, engine]) {
        this.sockets.add(socket);
        socket.on("close", () => this.sockets.delete(socket));
        socket.on("error", () => {
          client.destroy();
          engine.destroy();
        });
      }
      client.pipe(engine).pipe(client);
    });
    server.listen(this.port, "127.0.0.1");
    await once(server, "listening");
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise((resolve) => server.close(resolve));
  }
}

describe.skipIf(!env)("the reconciler while the Docker engine is unreachable", () => {
  const docker = env?.docker as Docker;
  const run = randomBytes(3).toString("hex");
  const network = `platform-test-${run}`;
  const slug = `eo-${run}`;
  const relay = new EngineRelay();
  let t: TestMaster;
  let publicUrl: string;
  let adminUrl: string;

  beforeAll(async () => {
    await relay.start();
    // dockerode reads DOCKER_HOST when a client is made: the master's clients, made now, use the relay.
    const previous = process.env.DOCKER_HOST;
    process.env.DOCKER_HOST = `tcp://127.0.0.1:${relay.port}`;
    try {
      t = await startTestMaster(
        "postgres",
        brokerTestConfig("engine", (config) => fastReconciler(config, network)),
      );
    } finally {
      if (previous === undefined) delete process.env.DOCKER_HOST;
      else process.env.DOCKER_HOST = previous;
    }
    await createChallenge(t, slug);
    const server = await t.listen();
    publicUrl = server.url;
    adminUrl = server.admin.url;
  });
  afterAll(async () => {
    await relay.start().catch(() => {});
    await t?.close();
    await relay.stop();
    await docker
      .getContainer(challengeContainerName(slug))
      .remove({ force: true })
      .catch(() => {});
    await docker
      .getNetwork(network)
      .remove()
      .catch(() => {});
  });

  const readiness = async (headers: Record<string, string> = {}) => {
    const response = await fetch(`${adminUrl}/readyz`, { headers });
    return {
      status: response.status,
      body: (await response.json()) as {
        failing: string[];
        checks: Record<string, { status: string; error?: string }>;
      },
    };
  };

  it("stays up and says why it is not ready, then reconciles what went missing once the engine is back", async () => {
    const first = await untilObserved(t.adminFetch, t.admin, slug, "running");
    await relay.stop();
    let report = await readiness(t.admin);
    await eventually(
      async () => {
        report = await readiness(t.admin);
        return report.status === 503 && report.body.failing.includes("reconciler");
      },
      15_000,
      "/readyz to name the reconciler",
    );
    expect(report.body.checks.reconciler?.error).toMatch(/^the Docker engine is unreachable: /);
    // The public listener names the failing check, never its reason.
    const publicReady = await fetch(`${publicUrl}/readyz`);
    expect(publicReady.status).toBe(503);
    const publicBody = await publicReady.text();
    expect(publicBody).toContain("reconciler");
    expect(publicBody).not.toContain("unreachable");
    // The master itself answers throughout.
    expect((await fetch(`${publicUrl}/livez`)).status).toBe(200);
    expect((await fetch(`${publicUrl}/v1/registry`)).status).toBe(200);

    // What happens while it cannot see: the container goes away.
    await docker.getContainer(first.container_id!).remove({ force: true });
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await containerOf(docker, slug)).toBeNull();

    await relay.start();
    await eventually(
      async () => (await containerOf(docker, slug))?.State.Running === true,
      20_000,
      "the container back",
    );
    await eventually(async () => (await readiness()).status === 200, 15_000, "ready again");
    const back = await untilObserved(t.adminFetch, t.admin, slug, "running");
    expect(back.container_id).toBe((await containerOf(docker, slug))?.Id);
    const { runtime, events } = await runtimeOf(t.adminFetch, t.admin, slug);
    expect(runtime.container_id).not.toBe(first.container_id);
    expect(events.map((e) => e.kind)).toEqual(["runtime_restarted", "runtime_started"]);
    expect(events[0]?.detail.reason).toBe("no container");
  }, 90_000);
});
