// `platform status` and `platform status <slug>` against a real master with its reconciler on:
// the lease and each challenge's desired and observed state, through the admin API.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "@platform/core";
import { createMaster, loadMasterConfig, type Master } from "@platform/master";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../test/run-cli.js";

const ADMIN_TOKEN = "status-test-admin-token-0123456789";
let master: Master;
let env: Record<string, string>;

beforeAll(async () => {
  const config = loadMasterConfig(
    { host: "127.0.0.1", port: 0, dataDir: mkdtempSync(join(tmpdir(), "cli-status-master-")) },
    { ADMIN_TOKEN },
  );
  master = await createMaster(config, {
    logger: createLogger({ name: "test-master", level: "silent" }),
  });
  const server = await master.listen();
  // A draft: the reconciler wants it stopped and never needs to start a container.
  await master.store.create({
    slug: "quiet",
    name: "Quiet",
    image: "ghcr.io/x/quiet:1",
    version: "1",
    emission_percent: 0,
    api_version: "1.0",
  });
  env = {
    PLATFORM_MASTER_URL: server.url,
    PLATFORM_ADMIN_URL: server.admin.url,
    ADMIN_TOKEN,
    PLATFORM_HOME: mkdtempSync(join(tmpdir(), "cli-status-home-")),
  };
}, 120_000);
afterAll(async () => {
  await master?.close();
});

describe("platform status (the subnet's runtime)", () => {
  it("lists the reconciler's lease and every challenge, as text and as JSON", async () => {
    const json = await runCli(["status", "--json"], { env });
    expect(json.code).toBe(0);
    const body = JSON.parse(json.stdout) as {
      lease: { live: boolean; holder: string };
      challenges: { slug: string; desired: string }[];
    };
    expect(body.lease.live).toBe(true);
    expect(body.challenges).toEqual([
      expect.objectContaining({ slug: "quiet", desired: "stopped" }),
    ]);
    const text = await runCli(["status"], { env });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`reconciler: held by ${body.lease.holder}`);
    expect(text.stdout).toMatch(/SLUG\s+STATUS\s+DESIRED\s+OBSERVED\s+RESTARTS/);
    expect(text.stdout).toMatch(/quiet\s+draft\s+stopped\s+/);
  }, 60_000);

  it("shows one challenge's runtime, and says so for an unknown slug or a wrong token", async () => {
    const one = await runCli(["status", "quiet"], { env });
    expect(one.code).toBe(0);
    expect(one.stdout).toMatch(/^quiet: draft, wants stopped, observed /);
    const unknown = await runCli(["status", "ghost"], { env });
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('no challenge "ghost"');
    const refused = await runCli(["status"], {
      env: { ...env, ADMIN_TOKEN: "wrong-admin-token-0123456789" },
    });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/401/);
  }, 60_000);
});
