// Masters sharing one PostgreSQL and one Docker engine: only the holder of the reconciler lease
// acts; when it stops, another takes over without starting anything twice; a master restarted
// after an outage reconciles every active challenge, starting only what went missing.
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createLogger, type Database, openDatabase } from "@platform/core";
import { createTestDatabase, testServerUrl } from "@platform/core/testing";
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadMasterConfig } from "../../src/config.js";
import { createMaster, type Master } from "../../src/master.js";
import { reconcilerOf } from "../../src/reconciler/reconciler-routes.js";
import { challengeContainerName } from "../../src/runtime/challenge-containers.js";
import { brokerTestConfig, dockerForTests, eventually, IMAGES } from "../broker/docker-test-env.js";
import { jsonInit } from "../test-master.js";
import { containerOf, fastReconciler, type RuntimeEventView } from "./reconciler-kit.js";

const env = await dockerForTests();

describe.skipIf(!env)("the reconciler with several masters on one database", () => {
  const docker = env?.docker as Docker;
  const run = randomBytes(3).toString("hex");
  const network = `platform-test-${run}`;
  const slugs = ["one", "two", "three"].map((name) => `rm-${name}-${run}`);
  const adminToken = `admin-${randomBytes(12).toString("hex")}`;
  const masterKey = randomBytes(32);
  const admin = { "x-admin-token": adminToken };
  let shared: Database;
  let url: string;
  const live: Master[] = [];
  const pools: Database[] = [];

  /** A master on its own pool of the shared database, listening (so reconciling). */
  async function startMaster(): Promise<Master> {
    const database = await openDatabase({ url, max: 4 });
    pools.push(database);
    const config = loadMasterConfig(
      { dataDir: mkdtempSync(join(tmpdir(), "platform-rc-")), port: 0 },
      { ADMIN_TOKEN: adminToken },
    );
    brokerTestConfig("engine", (c) => fastReconciler(c, network))(config);
    config.weights.intervalSeconds = 0;
    const master = await createMaster(config, {
      database,
      masterKey,
      logger: createLogger({ name: "rc-restart", level: "silent" }),
    });
    await master.listen({ host: "127.0.0.1", port: 0, adminHost: "127.0.0.1" });
    live.push(master);
    return master;
  }
  const stopMaster = async (master: Master) => {
    await master.close();
    live.splice(live.indexOf(master), 1);
  };
  const adminGet = async (master: Master, path: string) =>
    (await master.adminApp.fetch(new Request(`http://m.test${path}`, { headers: admin }))).json();
  const events = async (master: Master, slug: string) =>
    (
      (await adminGet(master, `/v1/admin/challenges/${slug}/runtime`)) as {
        events: RuntimeEventView[];
      }
    ).events;
  const startsOf = async (master: Master, slug: string) =>
    (await events(master, slug)).filter((e) => e.kind !== "runtime_stopped");
  const allRunning = (master: Master) =>
    eventually(
      async () => {
        const status = (await adminGet(master, "/v1/admin/reconciler")) as {
          challenges: { observed: string }[];
        };
        return status.challenges.every((c) => c.observed === "running");
      },
      30_000,
      "every challenge running",
    );
  const ids = async () =>
    Promise.all(slugs.map(async (slug) => (await containerOf(docker, slug))?.Id ?? null));

  beforeAll(async () => {
    shared = await createTestDatabase({ backend: "postgres" });
    const [{ name }] = (await shared.sql`select current_database() as name`) as unknown as [
      { name: string },
    ];
    const server = new URL(testServerUrl());
    server.pathname = `/${name}`;
    url = server.toString();
  });
  afterAll(async () => {
    for (const master of [...live]) await master.close();
    for (const pool of pools) await pool.close();
    await shared?.close();
    for (const slug of slugs)
      await docker
        .getContainer(challengeContainerName(slug))
        .remove({ force: true })
        .catch(() => {});
    await docker
      .getNetwork(network)
      .remove()
      .catch(() => {});
  });

  it("only the lease holder acts; the other takes over when it stops, starting nothing twice", async () => {
    const first = await startMaster();
    const second = await startMaster();
    const leaders = [first, second].filter((m) => reconcilerOf(m.context)!.isLeader);
    expect(leaders).toEqual([first]);
    for (const slug of slugs) {
      const res = await second.adminApp.fetch(
        new Request(
          "http://m.test/v1/admin/challenges",
          jsonInit(
            "POST",
            { slug, name: slug, image: IMAGES.challenge, version: "1", status: "active" },
            admin,
          ),
        ),
      );
      expect(res.status).toBe(201);
    }
    await allRunning(second);
    const holder = reconcilerOf(first.context)!.lease.holder;
    for (const slug of slugs) {
      const started = await startsOf(second, slug);
      expect(started.map((e) => [e.kind, e.detail.holder])).toEqual([["runtime_started", holder]]);
    }
    const before = await ids();
    await stopMaster(first);
    await eventually(async () => reconcilerOf(second.context)!.isLeader, 10_000, "the takeover");
    // A few passes of the new holder: it adopts the running containers as they are.
    await sleep(3_000);
    expect(await ids()).toEqual(before);
    for (const slug of slugs) expect(await startsOf(second, slug)).toHaveLength(1);
    const status = (await adminGet(second, "/v1/admin/reconciler")) as {
      lease: { holder: string };
    };
    expect(status.lease.holder).toBe(reconcilerOf(second.context)!.lease.holder);
  }, 90_000);

  it("a master restarted after an outage reconciles every challenge and starts only what went missing", async () => {
    const [survivor] = live;
    const before = await ids();
    await stopMaster(survivor!);
    // While no master runs, one challenge's container is removed and one is killed.
    await docker.getContainer(before[1]!).remove({ force: true });
    await docker.getContainer(before[2]!).kill();
    const restarted = await startMaster();
    expect(reconcilerOf(restarted.context)!.isLeader).toBe(true);
    const expected = [
      ["runtime_started"],
      ["runtime_restarted", "runtime_started"],
      ["runtime_restarted", "runtime_started"],
    ];
    const kinds = () =>
      Promise.all(slugs.map(async (slug) => (await startsOf(restarted, slug)).map((e) => e.kind)));
    await eventually(
      async () => JSON.stringify(await kinds()) === JSON.stringify(expected),
      30_000,
      "the missing and the exited challenge restarted",
    );
    await allRunning(restarted);
    // More passes change nothing: nothing is started twice.
    await sleep(3_000);
    expect(await kinds()).toEqual(expected);
    const after = await ids();
    expect(after[0]).toBe(before[0]);
    expect(after[1]).not.toBe(before[1]);
    expect(after[2]).not.toBe(before[2]);
    for (const id of after)
      expect((await docker.getContainer(id!).inspect()).State.Running).toBe(true);
  }, 90_000);
});
