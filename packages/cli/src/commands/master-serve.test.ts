import { once } from "node:events";
import { mkdtempSync } from "node:fs";
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

  it("starts on the embedded database, answers /health, and stops cleanly on SIGTERM", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "cli-master-"));
    const child = spawnCli(["master", "serve", "--data-dir", dataDir, "--port", "0"], {
      env: { ADMIN_TOKEN: "cli-test-admin-token-0123", DATABASE_URL: "" },
    });
    const [, url] = await waitForOutput(child, /listening on (http:\/\/127\.0\.0\.1:\d+)/, 60_000);
    const health = await fetch(`${url}/health`);
    expect(await health.json()).toEqual({ status: "ok", database: "pglite" });
    const registry = await (await fetch(`${url}/v1/registry`)).json();
    expect(registry).toMatchObject({ network: "platform", challenges: [] });
    child.kill("SIGTERM");
    const [code] = await once(child, "close");
    expect(code).toBe(0);
  }, 90_000);
});
