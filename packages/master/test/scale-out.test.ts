// Scale-out (docs/deployment.md, "Several masters"): two masters, each with its own connection
// pool, on one PostgreSQL database and one master key, proxy consistently. A challenge
// registered and activated through one is served by the other; deactivated through one, the
// other stops forwarding it within the documented cache time (PLATFORM_PROXY_CACHE_MS), and a
// reactivation is seen the same way. Real sockets end to end: the client, both masters' public
// listeners, the upstream.
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger, type Database, openDatabase } from "@platform/core";
import { createTestDatabase, testServerUrl } from "@platform/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadMasterConfig } from "../src/config.js";
import { createMaster, type Master, type MasterServer } from "../src/master.js";
import { type EchoUpstream, startEchoUpstream } from "./proxy/echo-upstream.js";

const CACHE_MS = 300;
// The cache bound plus room for a loaded CI machine: what is asserted is "stops within the
// cache time", with slack for scheduling, never a latency figure.
const SEEN_WITHIN_MS = CACHE_MS + 3_000;

describe("two masters on one PostgreSQL", () => {
  let shared: Database;
  let second: Database;
  let up: EchoUpstream;
  const masters: Master[] = [];
  const servers: MasterServer[] = [];
  const adminToken = `admin-${randomBytes(8).toString("hex")}`;
  const masterKey = randomBytes(32);

  beforeAll(async () => {
    up = await startEchoUpstream();
    shared = await createTestDatabase({ backend: "postgres" });
    const [{ name }] = (await shared.sql`select current_database() as name`) as unknown as [
      { name: string },
    ];
    const url = new URL(testServerUrl());
    url.pathname = `/${name}`;
    // The second replica's own pool on the same database, as a second process would have.
    second = await openDatabase({ url: url.toString(), max: 4 });
    for (const database of [shared, second]) {
      const config = loadMasterConfig(
        { dataDir: mkdtempSync(join(tmpdir(), "platform-scale-")), port: 0 },
        { ADMIN_TOKEN: adminToken, PLATFORM_PROXY_CACHE_MS: String(CACHE_MS) },
      );
      config.imagePolicy = {
        allowedPrefixes: ["ghcr.io/"],
        requireTagOrDigest: true,
        forbidLatest: true,
      };
      config.weights.intervalSeconds = 0;
      const master = await createMaster(config, {
        database,
        masterKey,
        logger: createLogger({ name: "scale-out", level: "silent" }),
      });
      masters.push(master);
      servers.push(await master.listen({ host: "127.0.0.1", port: 0, adminHost: "127.0.0.1" }));
    }
  });

  afterAll(async () => {
    for (const master of masters) await master.close();
    await second?.close();
    await shared?.close();
    await up?.close();
  });

  const admin = (replica: number, path: string, body?: unknown) =>
    fetch(`${servers[replica]!.admin.url}${path}`, {
      method: "POST",
      headers: { "x-admin-token": adminToken, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const proxied = (replica: number) =>
    fetch(`${servers[replica]!.url}/challenges/shared-slug/items?a=1`).then(async (response) => {
      await response.arrayBuffer();
      return response.status;
    });

  /** Polls replica `replica` until it answers `status`; how long that took. */
  async function until(replica: number, status: number): Promise<number> {
    const started = Date.now();
    while (Date.now() - started < SEEN_WITHIN_MS * 3) {
      if ((await proxied(replica)) === status) return Date.now() - started;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`replica ${replica} never answered ${status}`);
  }

  it("serves through the second what the first registered, and follows its status changes", async () => {
    const created = await admin(0, "/v1/admin/challenges", {
      slug: "shared-slug",
      name: "shared",
      image: "ghcr.io/org/shared:1.0",
      version: "1.0",
      status: "active",
      internal_base_url: up.url,
    });
    expect(created.status).toBe(201);
    // Replica 1 never saw the write: it reads the shared database.
    expect(await until(1, 200)).toBeLessThan(SEEN_WITHIN_MS);
    expect(await proxied(0)).toBe(200);

    // Deactivated through replica 0: replica 0 stops at once (its own write invalidates its
    // cache), replica 1 within the cache time.
    expect((await admin(0, "/v1/admin/challenges/shared-slug/deactivate")).status).toBe(200);
    expect(await proxied(0)).toBe(404);
    expect(await until(1, 404)).toBeLessThan(SEEN_WITHIN_MS);

    // Reactivated through replica 1: replica 0 follows the same way.
    expect((await admin(1, "/v1/admin/challenges/shared-slug/activate")).status).toBe(200);
    expect(await proxied(1)).toBe(200);
    expect(await until(0, 200)).toBeLessThan(SEEN_WITHIN_MS);
  });
});
