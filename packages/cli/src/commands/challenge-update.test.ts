// `platform challenge update` against a real master, its reconciler and the real Docker engine
// (the test images of .ci/test-images.sh): each step on stderr, the outcome on stdout, exit 1
// when the new image was rolled back.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createLogger } from "@platform/core";
import { createMaster, loadMasterConfig, type Master } from "@platform/master";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../test/run-cli.js";

const ADMIN_TOKEN = "update-test-admin-token-0123456789";
const IMAGES = [
  "platform-test/challenge:1",
  "platform-test/challenge-healthcheck:1",
  "platform-test/nonroot:1",
];
const docker = (...args: string[]) =>
  execFileSync("docker", args, { encoding: "utf8", stdio: "pipe" });
const haveImages = (() => {
  try {
    docker("image", "inspect", ...IMAGES);
    return true;
  } catch {
    console.warn(
      "challenge-update.test: no Docker engine or test images (.ci/test-images.sh): skipped",
    );
    return false;
  }
})();

describe.skipIf(!haveImages)("platform challenge update", () => {
  const run = randomBytes(3).toString("hex");
  const slug = `cu-${run}`;
  const network = `platform-test-${run}`;
  let master: Master;
  let env: Record<string, string>;

  beforeAll(async () => {
    const config = loadMasterConfig(
      { host: "127.0.0.1", port: 0, dataDir: mkdtempSync(join(tmpdir(), "cli-update-master-")) },
      { ADMIN_TOKEN, PLATFORM_IMAGE_ALLOWLIST: "platform-test/" },
    );
    config.broker.dockerNetwork = network;
    config.broker.gpuHost = false;
    Object.assign(config.reconciler, {
      intervalSeconds: 1,
      backoffSeconds: 1,
      startGraceSeconds: 1,
      updateReadySeconds: 8,
      drainSeconds: 2,
    });
    master = await createMaster(config, {
      logger: createLogger({ name: "test-master", level: "silent" }),
    });
    const server = await master.listen();
    await master.store.create({
      slug,
      name: slug,
      image: IMAGES[0]!,
      version: "1",
      status: "active",
      emission_percent: 0,
      api_version: "1.0",
    });
    env = {
      PLATFORM_MASTER_URL: server.url,
      PLATFORM_ADMIN_URL: server.admin.url,
      ADMIN_TOKEN,
      PLATFORM_HOME: mkdtempSync(join(tmpdir(), "cli-update-home-")),
    };
    for (let i = 0; i < 60; i++) {
      const status = await runCli(["status", slug, "--json"], { env });
      if (status.code === 0 && JSON.parse(status.stdout).runtime?.observed === "running") break;
      await sleep(500);
    }
  }, 120_000);
  afterAll(async () => {
    await master?.close();
    for (const suffix of ["", "-next", "-old"]) {
      try {
        docker("rm", "-f", `platform-challenge-${slug}${suffix}`);
      } catch {}
    }
    try {
      docker("network", "rm", network);
    } catch {}
  });

  it("shows each step and ends with updated", async () => {
    const result = await runCli(["challenge", "update", slug, "--image", IMAGES[1]!], { env });
    expect(result.stderr).toMatch(/pinned: platform-test\/challenge-healthcheck:1 is sha256:/);
    expect(result.stderr).toContain("switched:");
    expect(result.stderr).toContain("stopped old:");
    expect(result.stdout).toMatch(new RegExp(`^update ${slug}: updated \\(`));
    expect(result.code).toBe(0);
  }, 90_000);

  it("exits 1 with the reason when the new image is rolled back", async () => {
    const result = await runCli(["challenge", "update", slug, "--image", IMAGES[2]!, "--json"], {
      env,
    });
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({
      slug,
      operation: "update",
      status: "rolled_back",
    });
    expect(result.stderr).toContain("the update was rolled back");
    expect((await master.store.get(slug)).image).toBe(IMAGES[1]);
  }, 90_000);

  it("explains a refused image", async () => {
    const result = await runCli(["challenge", "update", slug, "--image", "evil.example/x:1"], {
      env,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/400/);
  }, 60_000);
});
