import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "@platform/core";
import { createTestDatabase } from "@platform/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawSocket } from "../test/proxy/echo-upstream.js";
import { loadMasterConfig } from "./config.js";
import { createMaster, type Master, type MasterServer } from "./master.js";

// The admin surface lives on its own listener so that challenge content (served on the public
// origin) can never reach it as same-origin script: each listener must serve only its side.
describe("the master's two listeners", () => {
  const adminToken = `admin-${randomBytes(12).toString("hex")}`;
  const logged: { level: string; msg: string }[] = [];
  let master: Master;
  let server: MasterServer;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const database = await createTestDatabase({ backend: "pglite" });
    const dataDir = mkdtempSync(join(tmpdir(), "platform-master-"));
    const config = loadMasterConfig({ dataDir, port: 0 }, { ADMIN_TOKEN: adminToken });
    config.weights.intervalSeconds = 0;
    master = await createMaster(config, {
      database,
      masterKey: randomBytes(32),
      logger: createLogger({
        name: "listeners",
        level: "debug",
        write: (line) => logged.push(JSON.parse(line) as { level: string; msg: string }),
      }),
    });
    server = await master.listen({ host: "127.0.0.1", port: 0 });
    close = async () => {
      await master.close();
      await database.close();
    };
  });
  afterAll(() => close?.());

  it("listens on two ports, the admin one on loopback by default", () => {
    expect(master.config.adminHost).toBe("127.0.0.1");
    expect(server.admin.host).toBe("127.0.0.1");
    expect(server.admin.port).not.toBe(server.port);
    expect(server.admin.url).toBe(`http://127.0.0.1:${server.admin.port}`);
  });

  const adminSide: [string, string][] = [
    ["GET", "/admin"],
    ["GET", "/admin/challenges"],
    ["POST", "/admin/login"],
    ["POST", "/admin/challenges/other/disable"],
    ["GET", "/v1/admin/challenges"],
    ["POST", "/v1/admin/challenges"],
    ["POST", "/v1/admin/challenges/other/disable"],
    ["GET", "/v1/admin/challenges/other/status"],
    ["POST", "/v1/admin/weights/collect"],
    ["GET", "/v1/admin/weights/history"],
    ["POST", "/v1/docker/run"],
    ["POST", "/v1/docker/list"],
    ["POST", "/v1/docker/cleanup"],
    ["GET", "/v1/docker/gpu-leases"],
  ];

  it.each(adminSide)(
    "the public listener does not serve %s %s, even to the admin token",
    async (method, path) => {
      const res = await fetch(`${server.url}${path}`, {
        method,
        headers: { "x-admin-token": adminToken, "content-type": "application/json" },
        ...(method === "POST" ? { body: "{}" } : {}),
      });
      expect(res.status).toBe(404);
      expect(res.headers.get("set-cookie")).toBeNull();
    },
  );

  it("the admin listener serves the admin side", async () => {
    const headers = { "x-admin-token": adminToken };
    expect((await fetch(`${server.admin.url}/v1/admin/challenges`, { headers })).status).toBe(200);
    expect((await fetch(`${server.admin.url}/admin`, { headers })).status).toBe(200);
    // The broker is there too: it answers (401 without a broker token), not 404.
    const list = await fetch(`${server.admin.url}/v1/docker/list`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(list.status).toBe(401);
  });

  it.each([
    ["GET", "/v1/registry"],
    ["GET", "/v1/weights/latest"],
    ["GET", "/v1/challenges/dashboard.svg"],
    ["GET", "/challenges/any/page"],
  ])("the admin listener does not serve the public %s %s", async (method, path) => {
    expect((await fetch(`${server.admin.url}${path}`, { method })).status).toBe(404);
  });

  it("both answer /health and /version; each publishes only its own routes in /openapi.json", async () => {
    for (const base of [server.url, server.admin.url]) {
      expect((await fetch(`${base}/health`)).status).toBe(200);
      expect((await fetch(`${base}/version`)).status).toBe(200);
    }
    const paths = async (base: string) =>
      Object.keys(
        ((await (await fetch(`${base}/openapi.json`)).json()) as { paths: object }).paths,
      );
    const publicPaths = await paths(server.url);
    const adminPaths = await paths(server.admin.url);
    expect(publicPaths).toContain("/v1/registry");
    expect(publicPaths.filter((p) => /^\/(admin|v1\/admin|v1\/docker)\b/.test(p))).toEqual([]);
    expect(adminPaths).toContain("/v1/admin/challenges");
    expect(adminPaths).toContain("/v1/docker/run");
    expect(adminPaths).not.toContain("/v1/registry");
  });

  const requestLine = (method: string, target: string) =>
    `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n`;

  it("answers TRACE on any path, on both listeners, 405 with no error logged", async () => {
    logged.length = 0;
    for (const base of [server.url, server.admin.url]) {
      for (const [method, target] of [
        ["TRACE", "/"],
        ["TRACE", "/admin"],
        ["TRACE", "/challenges/any/x?y=1"],
        ["TRACE", "/v1/registry"],
      ] as const) {
        const answer = await rawSocket(base, requestLine(method, target));
        expect(answer, `${method} ${target}`).toMatch(/^HTTP\/1\.1 405 /);
        expect(answer).toContain('"code":"method_not_allowed"');
        expect(answer).not.toMatch(/at .*\.(?:js|ts):\d+/);
      }
    }
    expect(logged.filter((line) => line.level === "error" || line.level === "warn")).toEqual([]);
  });

  it("answers CONNECT 405 instead of dropping the connection, with no error logged", async () => {
    logged.length = 0;
    for (const base of [server.url, server.admin.url]) {
      for (const target of ["example.com:443", `127.0.0.1:${server.admin.port}`]) {
        const answer = await rawSocket(
          base,
          `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`,
        );
        expect(answer, target).toMatch(/^HTTP\/1\.1 405 /);
        expect(answer).toContain('"code":"method_not_allowed"');
      }
    }
    // The listener still serves afterwards.
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    expect(logged.filter((line) => line.level === "error" || line.level === "warn")).toEqual([]);
  });
});
