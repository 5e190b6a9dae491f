import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, spawnCli, waitForOutput } from "../../test/run-cli.js";
import { versionFromImage } from "./challenge-register.js";

const ADMIN = "cli-e2e-admin-token-0123456789";

describe("platform challenge (against a real master process)", () => {
  let master: ChildProcess;
  let url = "";
  let adminUrl = "";
  let config = "";
  let dir = "";

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "cli-challenge-"));
    master = spawnCli(["master", "serve", "--data-dir", join(dir, "data"), "--port", "0"], {
      env: { ADMIN_TOKEN: ADMIN, DATABASE_URL: "", PLATFORM_WEIGHTS_INTERVAL_SECONDS: "0" },
    });
    [, url, adminUrl] = (await waitForOutput(
      master,
      /listening on (http:\/\/127\.0\.0\.1:\d+).*\nadmin pages, admin API and broker on (http:\/\/127\.0\.0\.1:\d+)/,
      60_000,
    )) as unknown as [string, string, string];
    writeFileSync(join(dir, "token"), `${ADMIN}\n`);
    config = join(dir, "master.yaml");
    writeFileSync(
      config,
      `master:\n  registry_url: ${url}\n  admin_url: ${adminUrl}\nsecurity:\n  admin_token_file: token\n`,
    );
  }, 90_000);

  afterAll(async () => {
    master.kill("SIGTERM");
    await once(master, "close");
  });

  const cli = (...args: string[]) =>
    runCli(args, { env: { ADMIN_TOKEN: "", ADMIN_TOKEN_FILE: "", PLATFORM_MASTER_URL: "" } });

  it("takes the record version from the image tag, latest without one", () => {
    expect(versionFromImage("ghcr.io/org/img:1.2.3")).toBe("1.2.3");
    expect(versionFromImage("registry:5000/org/img")).toBe("latest");
    expect(versionFromImage(`ghcr.io/org/img:2.0@sha256:${"a".repeat(64)}`)).toBe("2.0");
  });

  it("registers a challenge and prints its tokens once", async () => {
    const result = await cli(
      "challenge",
      "register",
      "scoring",
      "ghcr.io/org/scoring:1.2.3",
      "12.5",
      "--config",
      config,
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("registered scoring 1.2.3 (status draft)");
    expect(result.stdout).toMatch(/CHALLENGE_TOKEN=ct_\S+/);
    expect(result.stdout).toMatch(/BROKER_TOKEN=bt_\S+/);
  });

  it("prints JSON for scripts with --json, name defaulting to the slug", async () => {
    const result = await cli(
      "challenge",
      "register",
      "agent",
      "ghcr.io/org/agent:0.3.0",
      "30",
      "--config",
      config,
      "--json",
    );
    expect(result.code).toBe(0);
    const body = JSON.parse(result.stdout);
    expect(body.challenge).toMatchObject({
      slug: "agent",
      name: "agent",
      version: "0.3.0",
      emission_percent: 30,
    });
    expect(body.challenge_token).toMatch(/^ct_/);
  });

  it("activates and deactivates", async () => {
    const on = await cli("challenge", "activate", "scoring", "--config", config);
    expect([on.code, on.stdout.trim()]).toEqual([0, "scoring is now active"]);
    const off = await cli("challenge", "deactivate", "scoring", "--config", config, "--json");
    expect(JSON.parse(off.stdout)).toMatchObject({ slug: "scoring", status: "inactive" });
  });

  it.each([
    [
      ["challenge", "register", "scoring", "ghcr.io/org/scoring:1.2.3", "1"],
      /conflict \(409\).*already exists \[challenge_exists\]/,
    ],
    [
      ["challenge", "register", "untagged", "ghcr.io/org/img", "1"],
      /400.*tag or digest is required \[image_not_allowed\]/,
    ],
    [["challenge", "register", "Bad_Slug", "ghcr.io/org/img:1", "1"], /422\): slug:/],
    [["challenge", "register", "x-y", "ghcr.io/org/img:1", "lots"], /emission must be a number/],
    [["challenge", "activate", "ghost"], /not found \(404\).*ghost/],
  ])("fails readably: %j", async (args, message) => {
    const result = await cli(...args, "--config", config);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it("reports a refused admin token", async () => {
    const bad = join(dir, "bad.yaml");
    writeFileSync(
      bad,
      `master:\n  registry_url: ${url}\n  admin_url: ${adminUrl}\nsecurity:\n  admin_token: wrong-wrong-wrong-wrong\n`,
    );
    const result = await cli("challenge", "activate", "scoring", "--config", bad);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("refused the credentials (401)");
  });

  it("reports an unreachable master and a missing config", async () => {
    // A port that was just free: nothing listens there now.
    const probe = createServer().listen(0, "127.0.0.1");
    await once(probe, "listening");
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const down = join(dir, "down.yaml");
    writeFileSync(
      down,
      `master:\n  registry_url: http://127.0.0.1:${port}\n  admin_url: http://127.0.0.1:${port}\nsecurity:\n  admin_token: whatever-whatever-1\n`,
    );
    const unreachable = await cli("challenge", "activate", "scoring", "--config", down);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain(
      `cannot reach the master at http://127.0.0.1:${port} (ECONNREFUSED)`,
    );
    const missing = await cli(
      "challenge",
      "activate",
      "scoring",
      "--config",
      join(dir, "absent.yaml"),
    );
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("does not exist");
  });

  it("explains the group in --help", async () => {
    const result = await cli("challenge", "--help");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Manage and scaffold challenges");
    for (const command of [
      "create",
      "register",
      "activate",
      "deactivate",
      "pull",
      "restart",
      "update",
    ])
      expect(result.stdout).toContain(command);
  });
});
