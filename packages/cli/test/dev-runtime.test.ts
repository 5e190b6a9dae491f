import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ApiPromise, WsProvider } from "@polkadot/api";
import { afterAll, describe, expect, it } from "vitest";
import type { DevReady } from "../src/commands/dev.js";
import { runCli, spawnCli, waitForOutput } from "./run-cli.js";

// `platform dev --runtime`: the local chain beside the master serves the finney runtime asked
// for, so a challenge author can watch weights land on either epoch model.
const repo = fileURLToPath(new URL("../../../", import.meta.url));
const templateModule = join(repo, "templates", "challenge", "src", "challenge.ts");

const children: ChildProcess[] = [];
afterAll(async () => {
  for (const child of children) {
    if (child.exitCode === null) {
      child.kill("SIGKILL");
      await once(child, "close");
    }
  }
});

const env = () => ({
  PLATFORM_HOME: mkdtempSync(join(tmpdir(), "cli-dev-runtime-home-")),
  ADMIN_TOKEN: "",
  ADMIN_TOKEN_FILE: "",
  DATABASE_URL: "",
  PLATFORM_MASTER_URL: "",
  PLATFORM_CHAIN_ENDPOINTS: "",
});

describe("platform dev --runtime", () => {
  it("refuses a runtime it does not serve, by name, before starting anything", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "cli-dev-runtime-"));
    const result = await runCli(["dev", "--port", "0", "--runtime", "spec999"], {
      cwd,
      env: env(),
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('--runtime must be one of spec424, spec393, got "spec999"');
    expect(result.stderr).not.toContain("local chain at");
  });

  it("runs the local chain on the spec-393 runtime when asked, and says so", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "cli-dev-runtime-"));
    const child = spawnCli(
      ["dev", "--port", "0", "--json", "--runtime", "spec393", "--challenge", templateModule],
      { cwd, env: env() },
    );
    children.push(child);
    let stderr = "";
    child.stderr?.on("data", (chunk) => {
      stderr += chunk;
    });
    const [line] = await waitForOutput(child, /^\{"status":"ready".*\}$/m, 120_000);
    const ready = JSON.parse(line as string) as DevReady;
    expect(ready.chain).toMatchObject({ runtime: "spec393", netuid: 1, commit_reveal: true });
    // The chain's own word: spec 393's metadata, without the epoch counter.
    const api = await ApiPromise.create({
      provider: new WsProvider(ready.chain?.url),
      noInitWarn: true,
    });
    try {
      expect(api.runtimeVersion.specVersion.toNumber()).toBe(393);
      expect(api.query["subtensorModule"]?.["subnetEpochIndex"]).toBeUndefined();
    } finally {
      await api.disconnect();
    }
    // An epoch there is tempo + 1 blocks (the counter's is tempo): the progress line says 11.
    expect(stderr).toMatch(/finney spec393 runtime, epochs by the block-number formula/);
    expect(stderr).toMatch(/revealed an epoch \(11 blocks\) later/);
    child.kill("SIGTERM");
    const [code] = await once(child, "close");
    expect(code).toBe(0);
  }, 180_000);
});
