import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { importWithVersion } from "@platform/core/testing";
import { describe, expect, it } from "vitest";
import { SDK_VERSION } from "./version.js";

const manifest = JSON.parse(
  readFileSync(fileURLToPath(new URL("../package.json", import.meta.url)), "utf8"),
) as { name: string; version: string };

describe("SDK_VERSION", () => {
  it("is the version in the SDK's package.json", () => {
    expect(SDK_VERSION).toBe(manifest.version);
  });

  it("follows package.json when a release bumps it (nothing is hard-coded)", async () => {
    const bumped = await importWithVersion(
      new URL("./version.ts", import.meta.url),
      "9.8.7-bumped",
    );
    expect(bumped["SDK_VERSION"]).toBe("9.8.7-bumped");
  });
});
