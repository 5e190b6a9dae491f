import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { startTestMaster } from "../test/test-master.js";
import { MASTER_API_VERSION, MASTER_VERSION } from "./version.js";

const manifest = JSON.parse(
  readFileSync(fileURLToPath(new URL("../package.json", import.meta.url)), "utf8"),
) as { name: string; version: string };

describe("MASTER_VERSION", () => {
  it("is the version in the master's package.json", () => {
    expect(MASTER_VERSION).toBe(manifest.version);
  });

  it("follows package.json when a release bumps it (nothing is hard-coded)", async () => {
    const root = mkdtempSync(join(tmpdir(), "master-version-"));
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
      const bumped = (await import(join(root, "src", "version.ts"))) as { MASTER_VERSION: string };
      expect(bumped.MASTER_VERSION).toBe("9.8.7-bumped");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("is what GET /version answers", async () => {
    const master = await startTestMaster("pglite");
    try {
      const response = await master.fetch("/version");
      expect(await response.json()).toEqual({
        service: "platform-master",
        version: manifest.version,
        api_version: MASTER_API_VERSION,
      });
    } finally {
      await master.close();
    }
  });
});
