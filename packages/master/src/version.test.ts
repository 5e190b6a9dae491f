import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { importWithVersion } from "@platform/core/testing";
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
    const bumped = await importWithVersion(
      new URL("./version.ts", import.meta.url),
      "9.8.7-bumped",
    );
    expect(bumped["MASTER_VERSION"]).toBe("9.8.7-bumped");
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
