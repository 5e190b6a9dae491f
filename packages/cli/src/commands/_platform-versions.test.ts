import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { installedPlatformVersions } from "./_platform-versions.js";
import { CliError } from "./_shared.js";
import { findTemplateDir, writeProject } from "./_template.js";

const packageVersion = (dir: string) =>
  (
    JSON.parse(
      readFileSync(fileURLToPath(new URL(`../../../${dir}/package.json`, import.meta.url)), "utf8"),
    ) as { version: string }
  ).version;

/**
 * An installed CLI beside an SDK of another version, as npm lays them out:
 * node_modules/@platform/{cli,challenge-sdk}. Returns the URL of the CLI's bundled entry.
 */
function installedLayout(cliVersion: string, sdkVersion: string): URL {
  const modules = join(mkdtempSync(join(tmpdir(), "cli-versions-")), "node_modules", "@platform");
  for (const [dir, version] of [
    ["cli", cliVersion],
    ["challenge-sdk", sdkVersion],
  ] as const) {
    mkdirSync(join(modules, dir, "dist"), { recursive: true });
    writeFileSync(
      join(modules, dir, "package.json"),
      JSON.stringify({
        name: `@platform/${dir}`,
        version,
        type: "module",
        exports: { ".": "./dist/index.js", "./package.json": "./package.json" },
      }),
    );
  }
  return pathToFileURL(join(modules, "cli", "dist", "cli.js"));
}

describe("installedPlatformVersions", () => {
  it("reads each package's own package.json in this repository", () => {
    const versions = installedPlatformVersions();
    expect(versions("@platform/challenge-sdk")).toBe(packageVersion("challenge-sdk"));
    expect(versions("@platform/cli")).toBe(packageVersion("cli"));
    expect(versions("@platform/core")).toBe(packageVersion("core"));
  });

  it("gives the SDK its own version when the installed CLI's differs", () => {
    const versions = installedPlatformVersions(installedLayout("9.8.7", "1.2.3"));
    expect(versions("@platform/challenge-sdk")).toBe("1.2.3");
    expect(versions("@platform/cli")).toBe("9.8.7");
  });

  it("refuses a package the installation does not carry, by name", () => {
    const versions = installedPlatformVersions(installedLayout("9.8.7", "1.2.3"));
    expect(() => versions("@platform/not-a-package")).toThrow(CliError);
    expect(() => versions("@platform/not-a-package")).toThrow(/@platform\/not-a-package/);
  });

  it("makes `create` write each dependency's own released range into the project", () => {
    const out = join(mkdtempSync(join(tmpdir(), "cli-versions-out-")), "project");
    const identity = { slug: "my-chal", name: "My Chal", version: "0.1.0", image: null };
    const from = installedLayout("9.8.7", "1.2.3");
    writeProject(findTemplateDir(), out, identity, installedPlatformVersions(from));
    const pkg = JSON.parse(readFileSync(join(out, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(pkg.dependencies["@platform/challenge-sdk"]).toBe("^1.2.3");
    expect(pkg.devDependencies["@platform/cli"]).toBe("^9.8.7");
  });
});
