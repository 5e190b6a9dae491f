import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
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
    const root = mkdtempSync(join(tmpdir(), "cli-version-"));
    try {
      mkdirSync(join(root, "src"));
      copyFileSync(
        fileURLToPath(new URL("./version.ts", import.meta.url)),
        join(root, "src", "version.ts"),
      );
      writeFileSync(
        join(root, "package.json"),
        JSON.stringify({
          name: manifest.name,
          version: "9.8.7-bumped",
          type: "module",
          exports: { "./package.json": "./package.json" },
        }),
      );
      const bumped = (await import(join(root, "src", "version.ts"))) as { CLI_VERSION: string };
      expect(bumped.CLI_VERSION).toBe("9.8.7-bumped");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("is what `platform --version` prints", async () => {
    const result = await runCli(["--version"]);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(manifest.version);
  });
});
