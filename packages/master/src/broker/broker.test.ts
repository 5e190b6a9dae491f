import { randomBytes } from "node:crypto";
import { createLogger, type Database, migrate } from "@platform/core";
import { createTestDatabase } from "@platform/core/testing";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadMasterConfig } from "../config.js";
import { masterMigrations } from "../migrations.js";
import type { ChallengeRow } from "../registry/challenge-row.js";
import { ChallengeStore } from "../registry/challenge-store.js";
import { Broker } from "./broker.js";

// No Docker engine at all: a socket that does not exist.
const nowhere = new Docker({ socketPath: "/nonexistent/platform-test-docker.sock" });

describe("the broker without a Docker engine", () => {
  let db: Database;
  let broker: Broker;
  let row: ChallengeRow;
  const lines: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase({ backend: "pglite" });
    await migrate(db.sql, { namespace: "master", migrations: await masterMigrations() });
    const store = new ChallengeStore(db.sql, randomBytes(32));
    row = (
      await store.create({
        slug: "offline",
        name: "o",
        image: "ghcr.io/x/y:1",
        version: "1",
        emission_percent: 0,
        api_version: "1.0",
      })
    ).row;
    const config = loadMasterConfig(
      {},
      { ADMIN_TOKEN: "a".repeat(32), PLATFORM_BROKER_IMAGES: "platform-test/" },
    ).broker;
    config.reaperIntervalSeconds = 0;
    const log = createLogger({
      name: "broker-test",
      level: "debug",
      write: (line) => lines.push(line),
    });
    broker = new Broker({ config, sql: db.sql, store, log, docker: nowhere });
  });
  afterAll(async () => {
    await broker?.stop();
    await db?.close();
  });

  const request = { job_id: "j", image: "platform-test/busybox:1", timeout_seconds: 10, gpus: 0 };

  it("still refuses bad requests with their 400 (validation needs no engine)", async () => {
    await expect(broker.run(row, { ...request, privileged: true })).rejects.toMatchObject({
      status: 400,
      code: "weakening_refused",
    });
    await expect(broker.run(row, { ...request, image: "alpine:3" })).rejects.toMatchObject({
      status: 400,
      code: "image_not_allowed",
    });
  });

  it("answers 503 docker_unavailable with Retry-After, and admits nothing", async () => {
    const error = await broker.run(row, request).catch((e) => e);
    expect(error).toMatchObject({
      status: 503,
      code: "docker_unavailable",
      headers: { "retry-after": "10" },
    });
    expect(await db.sql`select 1 from broker_runs`).toHaveLength(0);
    await expect(broker.list(row.slug)).rejects.toMatchObject({ status: 503 });
    await expect(broker.cleanup(row.slug, {})).rejects.toMatchObject({ status: 503 });
  });

  it("starts its reaper anyway: a failing pass is logged, never thrown", async () => {
    broker.start();
    await expect(broker.reap()).rejects.toBeDefined();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lines.some((line) => line.includes("broker reaper pass failed"))).toBe(true);
  });
});
