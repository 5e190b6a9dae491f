import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { importWithVersion } from "@platform/core/testing";
import { describe, expect, it } from "vitest";
import { runCli } from "../test/run-cli.js";
import { CLI_VERSION } from "./version.js";

const manifest = JSON.parse(
  readFileSync(fileURLToPath(new URL("../package.json", import.meta.url)), "utf8"),
) as { name: string; version: string };

describe("CLI_VERSION", () => {
  it("reads the CLI's own version", () => {
    expect(CLI_VERSION).toBe(manifest.version);
  });

  it("follows package.json when a release bumps it (nothing is hard-coded)", async () => {
    const bumped = await importWithVersion(
      new URL("./version.ts", import.meta.url),
      "9.8.7-bumped",
    );
    expect(bumped["CLI_VERSION"]).toBe("9.8.7-bumped");
  });

  it("is what `platform --version` prints", async () => {
    const result = await runCli(["--version"]);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(manifest.version);
  });
});
