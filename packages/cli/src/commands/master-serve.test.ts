import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, spawnCli, waitForOutput } from "../../test/run-cli.js";

const noAdminEnv = { ADMIN_TOKEN: "", ADMIN_TOKEN_FILE: "" };

describe("platform master serve", () => {
  it("refuses to start without an admin token, saying how to set one", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "cli-master-"));
    const result = await runCli(["master", "serve", "--data-dir", dataDir, "--port", "0"], {
      env: noAdminEnv,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("No admin token configured");
    expect(result.stderr).toContain("ADMIN_TOKEN_FILE");
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it("reports every bad setting at once, the environment's included, without a stack", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "cli-master-"));
    const result = await runCli(["master", "serve", "--data-dir", dataDir], {
      env: {
        ...noAdminEnv,
        PLATFORM_PORT: "eighty",
        PLATFORM_WEIGHTS_FAILURE_POLICY: "share-it",
      },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: Invalid master configuration:\n/);
    for (const variable of ["ADMIN_TOKEN", "PLATFORM_PORT", "PLATFORM_WEIGHTS_FAILURE_POLICY"]) {
      expect(result.stderr).toContain(`  - ${variable}: `);
    }
    expect(result.stderr).not.toContain("share-it");
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it("starts on the embedded database, answers /health, and stops cleanly on SIGTERM", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "cli-master-"));
    const child = spawnCli(["master", "serve", "--data-dir", dataDir, "--port", "0"], {
      env: { ADMIN_TOKEN: "cli-test-admin-token-0123", DATABASE_URL: "" },
    });
    const [, url, adminUrl] = await waitForOutput(
      child,
      /listening on (http:\/\/127\.0\.0\.1:\d+).*\nadmin pages, admin API and broker on (http:\/\/127\.0\.0\.1:\d+)/,
      60_000,
    );
    const health = await fetch(`${url}/health`);
    expect(await health.json()).toEqual({ status: "ok", database: "pglite" });
    const registry = await (await fetch(`${url}/v1/registry`)).json();
    expect(registry).toMatchObject({ network: "platform", challenges: [] });
    // The admin API is on the admin listener only.
    const token = { "x-admin-token": "cli-test-admin-token-0123" };
    expect(adminUrl).not.toBe(url);
    expect((await fetch(`${adminUrl}/v1/admin/challenges`, { headers: token })).status).toBe(200);
    expect((await fetch(`${url}/v1/admin/challenges`, { headers: token })).status).toBe(404);
    child.kill("SIGTERM");
    const [code] = await once(child, "close");
    expect(code).toBe(0);
  }, 90_000);

  it("takes the admin listener's address from --admin-host and --admin-port", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "cli-master-"));
    const probe = createServer().listen(0, "127.0.0.1");
    await once(probe, "listening");
    const adminPort = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const child = spawnCli(
      [
        "master",
        "serve",
        "--data-dir",
        dataDir,
        "--port",
        "0",
        "--admin-host",
        "127.0.0.1",
        "--admin-port",
        String(adminPort),
      ],
      { env: { ADMIN_TOKEN: "cli-test-admin-token-0123", DATABASE_URL: "" } },
    );
    const [, adminUrl] = await waitForOutput(
      child,
      /admin pages, admin API and broker on (http:\/\/127\.0\.0\.1:\d+)/,
      60_000,
    );
    expect(adminUrl).toBe(`http://127.0.0.1:${adminPort}`);
    expect((await fetch(`${adminUrl}/admin`)).status).toBe(401);
    child.kill("SIGTERM");
    const [code] = await once(child, "close");
    expect(code).toBe(0);
  }, 90_000);

  it("refuses an admin port equal to the public one, naming the flag", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "cli-master-"));
    const result = await runCli(
      ["master", "serve", "--data-dir", dataDir, "--port", "9555", "--admin-port", "9555"],
      { env: { ADMIN_TOKEN: "cli-test-admin-token-0123", DATABASE_URL: "" } },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("  - --admin-port: must differ from the public port");
  });
});
