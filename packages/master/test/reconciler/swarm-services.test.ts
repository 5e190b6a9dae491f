// Challenges as Swarm services (PLATFORM_CHALLENGE_BACKEND=swarm) on the engine's one-node
// swarm, through the real proxy: a challenge activated runs as one service and answers (the
// test process is outside the swarm: PLATFORM_CHALLENGE_SWARM_ADDRESS=task; a container on the
// network reaches it by its name, as a master inside the swarm does); a task
// killed is brought back by Swarm and reported; an update to an image that never runs is rolled
// back by Swarm with the old task serving throughout, and recorded; a restarted master adopts
// the service; an update that works is recorded once Swarm completes it; deactivating removes it.
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createLogger, type Database } from "@platform/core";
import { createTestDatabase } from "@platform/core/testing";
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadMasterConfig } from "../../src/config.js";
import { createMaster, type Master } from "../../src/master.js";
import type { ChallengeService } from "../../src/reconciler/swarm-services.js";
import { challengeContainerName } from "../../src/runtime/challenge-containers.js";
import { brokerTestConfig, dockerForTests, eventually, IMAGES } from "../broker/docker-test-env.js";
import { jsonInit } from "../test-master.js";
import { fastReconciler, runtimeOf, untilObserved } from "./reconciler-kit.js";

const env = await dockerForTests();
const PAGE = "platform-test/challenge-page:1";
// Its shell has no input: it exits at once, never ready.
const NEVER_READY = IMAGES.nonroot;

describe.skipIf(!env?.swarm)("challenges as Swarm services", () => {
  const docker = env?.docker as Docker;
  const run = randomBytes(3).toString("hex");
  const network = `platform-test-sw-${run}`;
  const slug = `sw-${run}`;
  const service = challengeContainerName(slug);
  const admin = { "x-admin-token": `admin-${randomBytes(12).toString("hex")}` };
  const masterKey = randomBytes(32);
  let database: Database;
  let master: Master;
  let publicUrl: string;
  const adminFetch = (path: string, init?: RequestInit) =>
    master.adminApp.fetch(new Request(`http://m.test${path}`, init));
  const runtime = () => runtimeOf(adminFetch, admin, slug);
  const inspect = () => docker.getService(service).inspect() as Promise<ChallengeService>;
  const page = async () => {
    const response = await fetch(`${publicUrl}/challenges/${slug}/hello.txt`);
    return { status: response.status, body: await response.text() };
  };
  const runningTasks = async () =>
    (
      (await docker.listTasks({
        filters: { service: [service], "desired-state": ["running"] },
      })) as {
        ID: string;
        Status: { State: string; ContainerStatus?: { ContainerID?: string } };
      }[]
    ).filter((task) => task.Status.State === "running");

  /** A master on the shared database, listening (so reconciling). */
  async function startMaster(): Promise<Master> {
    const config = loadMasterConfig(
      { dataDir: mkdtempSync(join(tmpdir(), "platform-sw-")), port: 0 },
      { ADMIN_TOKEN: admin["x-admin-token"] },
    );
    brokerTestConfig("engine", (c) => {
      fastReconciler(c, network, "swarm");
      // Swarm's monitor of a new task: an update completes (or rolls back) within it.
      c.reconciler.updateReadySeconds = 3;
    })(config);
    config.weights.intervalSeconds = 0;
    const started = await createMaster(config, {
      database,
      masterKey,
      logger: createLogger({ name: "swarm-services", level: "silent" }),
    });
    publicUrl = (await started.listen({ host: "127.0.0.1", port: 0, adminHost: "127.0.0.1" })).url;
    return started;
  }

  beforeAll(async () => {
    database = await createTestDatabase({ backend: "postgres" });
    master = await startMaster();
    const res = await adminFetch(
      "/v1/admin/challenges",
      jsonInit("POST", { slug, name: slug, image: PAGE, version: "1", status: "active" }, admin),
    );
    expect(res.status).toBe(201);
  });
  afterAll(async () => {
    await master?.close();
    await database?.close();
    await docker
      .getService(service)
      .remove()
      .catch(() => {});
    // The overlay network is in use until the service's tasks are gone.
    for (let i = 0; i < 40; i++) {
      const removed = await docker
        .getNetwork(network)
        .remove()
        .then(
          () => true,
          (error: { statusCode?: number }) => error.statusCode === 404,
        );
      if (removed) break;
      await sleep(250);
    }
  });

  it("runs an active challenge as one dnsrr service, updated start-first with rollback, that answers through the proxy", async () => {
    const view = await untilObserved(adminFetch, admin, slug, "running", 40_000);
    const info = await inspect();
    expect(view.container_id).toBe(info.ID);
    const spec = info.Spec as unknown as {
      EndpointSpec: { Mode: string; Ports?: unknown[] };
      UpdateConfig: Record<string, unknown>;
      Mode: { Replicated: { Replicas: number } };
      TaskTemplate: {
        ContainerSpec: { Image: string; Healthcheck?: { Test: string[] } };
        RestartPolicy: { Condition: string };
      };
    };
    expect(spec.EndpointSpec.Mode).toBe("dnsrr");
    expect(spec.EndpointSpec.Ports ?? []).toEqual([]);
    expect(spec.UpdateConfig).toMatchObject({
      Parallelism: 1,
      Order: "start-first",
      FailureAction: "rollback",
    });
    expect(spec.Mode.Replicated.Replicas).toBe(1);
    expect(spec.TaskTemplate.RestartPolicy.Condition).toBe("any");
    // Its image has busybox wget and a shell: Swarm checks /readyz (then /health) in the task.
    expect(spec.TaskTemplate.ContainerSpec.Healthcheck?.Test.slice(0, 3)).toEqual([
      "CMD",
      "/bin/sh",
      "-c",
    ]);
    expect(spec.TaskTemplate.ContainerSpec.Healthcheck?.Test[3]).toContain("/readyz");
    // Pinned to content, as the container path runs it.
    expect(spec.TaskTemplate.ContainerSpec.Image).toBe(view.pinned_image);
    expect(view.pinned_image).toMatch(/sha256:[0-9a-f]{64}$/);
    expect(info.Spec.Labels?.["platform.spec"]).toMatch(/^[0-9a-f]{32}$/);
    expect(await page()).toEqual({
      status: 200,
      body: "hello from a challenge behind the deployed master\n",
    });
    const { events } = await runtime();
    expect(events.map((e) => e.kind)).toEqual(["runtime_started"]);
    const status = (await (
      await adminFetch(`/v1/admin/challenges/${slug}/status`, { headers: admin })
    ).json()) as { status: string; detail: string };
    expect(status.status).toBe("running");
    expect(status.detail).toContain(`service ${service}: 1/1 task(s) running; health: ok`);
  }, 60_000);

  it("answers at its service name on the attachable network, where a master inside the swarm reaches it", async () => {
    const url = `http://${service}:8080/hello.txt`;
    const container = await docker.createContainer({
      Image: IMAGES.busybox,
      Cmd: ["wget", "-q", "-O", "-", url],
      Labels: { "platform.test": "control" },
      HostConfig: { NetworkMode: network },
    });
    try {
      await container.start();
      const { StatusCode } = (await container.wait()) as { StatusCode: number };
      const logs = (await container.logs({ stdout: true, stderr: true })).toString();
      expect({ StatusCode, said: logs.includes("hello from a challenge") }).toEqual({
        StatusCode: 0,
        said: true,
      });
    } finally {
      await container.remove({ force: true });
    }
  }, 30_000);

  it("reports a task Swarm brought back after it was killed", async () => {
    const [task] = await runningTasks();
    await docker.getContainer(task!.Status.ContainerStatus!.ContainerID!).kill();
    await eventually(
      async () => (await runtime()).events.some((e) => e.kind === "runtime_restarted"),
      20_000,
      "the restart reported",
    );
    const view = await untilObserved(adminFetch, admin, slug, "running", 30_000);
    expect(view.restarts).toBe(1);
    const restarted = (await runtime()).events.find((e) => e.kind === "runtime_restarted")!;
    expect(restarted.detail).toMatchObject({ by: "swarm", task: task!.ID });
    expect(String(restarted.detail.reason)).toContain("137");
    const [now] = await runningTasks();
    expect(now!.ID).not.toBe(task!.ID);
    expect((await page()).status).toBe(200);
  }, 60_000);

  it("an update to an image that never runs is rolled back by Swarm, the old task serving throughout", async () => {
    const before = await inspect();
    const [serving] = await runningTasks();
    const statuses: number[] = [];
    let on = true;
    const traffic = (async () => {
      while (on) {
        statuses.push((await page().catch(() => ({ status: 0 }))).status);
        await sleep(100);
      }
    })();
    const response = await adminFetch(
      `/v1/admin/challenges/${slug}/update`,
      jsonInit("POST", { image: NEVER_READY }, admin),
    );
    on = false;
    await traffic;
    expect(response.status).toBe(200);
    const result = (await response.json()) as { status: string; detail: string };
    expect(result.status).toBe("rolled_back");
    expect(result.detail).toMatch(/^rollback completed: the new task complete/);
    expect(statuses.length).toBeGreaterThan(5);
    expect(statuses.every((status) => status === 200)).toBe(true);
    const [still] = await runningTasks();
    expect(still!.ID).toBe(serving!.ID);
    const after = await inspect();
    expect(after.UpdateStatus?.State).toBe("rollback_completed");
    expect(after.Spec.Labels?.["platform.spec"]).toBe(before.Spec.Labels?.["platform.spec"]);
    const { runtime: view, events } = await runtime();
    expect(view.last_action).toBe("rollback");
    expect(view.last_error).toContain(`update to ${NEVER_READY} rolled back`);
    const rolledBack = events.find((e) => e.kind === "runtime_rolled_back")!;
    expect(rolledBack.detail).toMatchObject({ image: NEVER_READY, restored_image: PAGE });
    expect(String(rolledBack.detail.reason)).toBe(result.detail);
    // The registry names what runs again: no pass tries the bad image a second time.
    const record = (await (
      await adminFetch(`/v1/admin/challenges/${slug}`, { headers: admin })
    ).json()) as { image: string };
    expect(record.image).toBe(PAGE);
    await sleep(2_500);
    expect((await inspect()).Version.Index).toBe(after.Version.Index);
  }, 60_000);

  it("a restarted master adopts the service: no second one, nothing started again", async () => {
    const before = await inspect();
    const started = (await runtime()).events.filter((e) => e.kind === "runtime_started").length;
    await master.close();
    master = await startMaster();
    await untilObserved(adminFetch, admin, slug, "running", 20_000);
    await sleep(2_500);
    const services = await docker.listServices({ filters: { name: [service] } });
    expect(services.map((s) => s.ID)).toEqual([before.ID]);
    expect((await inspect()).Version.Index).toBe(before.Version.Index);
    const events = (await runtime()).events.filter((e) => e.kind === "runtime_started");
    expect(events).toHaveLength(started);
    expect((await page()).status).toBe(200);
  }, 60_000);

  it("an update to an image that becomes ready is Swarm's rolling update, recorded once it completes", async () => {
    const before = (await runtime()).runtime;
    const response = await adminFetch(
      `/v1/admin/challenges/${slug}/update`,
      jsonInit("POST", { image: IMAGES.challengeHealthcheck }, admin),
    );
    expect(response.status).toBe(200);
    expect(((await response.json()) as { status: string }).status).toBe("updated");
    const info = await inspect();
    expect(info.UpdateStatus?.State).toBe("completed");
    const { runtime: view, events } = await runtime();
    expect(view).toMatchObject({ image: IMAGES.challengeHealthcheck, last_action: "update" });
    expect(view.pinned_image).toBe(info.Spec.TaskTemplate?.ContainerSpec?.Image);
    expect(view.pinned_image).not.toBe(before.pinned_image);
    expect(events[0]).toMatchObject({
      kind: "runtime_updated",
      detail: { from: before.pinned_image, pinned_image: view.pinned_image },
    });
    // The next passes leave it alone: the service matches the record.
    await untilObserved(adminFetch, admin, slug, "running", 20_000);
    await sleep(2_500);
    expect((await inspect()).Version.Index).toBe(info.Version.Index);
    expect((await runtime()).events.filter((e) => e.kind === "runtime_updated")).toHaveLength(1);
  }, 60_000);

  it("deactivating the challenge removes its service", async () => {
    const res = await adminFetch(
      `/v1/admin/challenges/${slug}`,
      jsonInit("PATCH", { status: "inactive" }, admin),
    );
    expect(res.status).toBe(200);
    await untilObserved(adminFetch, admin, slug, "stopped", 20_000);
    const services = await docker.listServices({ filters: { name: [service] } });
    expect(services).toEqual([]);
    expect((await runtime()).events[0]?.kind).toBe("runtime_stopped");
  }, 60_000);
});
