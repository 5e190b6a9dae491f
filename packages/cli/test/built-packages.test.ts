// What users install is the built dist/, bundled by tsup: each package must still report the
// version in its own package.json from there (a bundle moves code, so a path relative to the
// source file would point elsewhere).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, repo, run } from "./built-packages.js";

const versionOf = (name: string) =>
  (
    JSON.parse(readFileSync(join(repo, "packages", name, "package.json"), "utf8")) as {
      version: string;
    }
  ).version;

/** A bundle's top-level `import … from "…"` lines: what loads whenever the bundle does. */
const staticImportsOf = (path: string) =>
  readFileSync(join(repo, path), "utf8").match(/^import [^;]*? from ['"][^'"]+['"];?$/gm) ?? [];

describe("the built packages", () => {
  beforeAll(ensureBuilt, 300_000);

  it("`platform --version` through the launcher and dist/ prints the CLI's package.json version", async () => {
    const result = await run(
      process.execPath,
      [join(repo, "packages/cli/bin/platform.js"), "--version"],
      repo,
    );
    expect(result.output.trim()).toBe(versionOf("cli"));
    expect(result.code).toBe(0);
  });

  it("the CLI's bundle loads the chain stack only in the commands that use it", () => {
    // One bundle: a static import there is loaded at every start of every command (the local
    // subtensor and @polkadot cost a CPU-second each time; the CLI's suites start it hundreds of
    // times). The chain's entries are imported where a command needs them.
    const staticImports = staticImportsOf("packages/cli/dist/cli.js");
    expect(staticImports.filter((line) => /@platform\/chain|@polkadot/.test(line))).toEqual([]);
  });

  it("@platform/core's bundle loads @polkadot (the sr25519 WebAssembly) only in initCrypto", () => {
    // Every master, challenge and CLI process imports core; loading the WebAssembly at import
    // cost ~0.6 CPU-seconds in each, including those that never sign.
    const staticImports = staticImportsOf("packages/core/dist/index.js");
    expect(staticImports.length).toBeGreaterThan(0);
    expect(staticImports.filter((line) => /@polkadot/.test(line))).toEqual([]);
    expect(readFileSync(join(repo, "packages/core/dist/index.js"), "utf8")).toMatch(
      /import\(["']@polkadot\/wasm-crypto["']\)/,
    );
  });

  it("a challenge built on dist/ reports the SDK's package.json version, MASTER_VERSION the master's", async () => {
    // Plain node, no `@platform/source` condition: the packages resolve to their dist/. The
    // SDK's version is what every challenge's GET /version serves (it is not exported).
    const script = [
      "const { mkdtempSync } = await import('node:fs');",
      "const { tmpdir } = await import('node:os');",
      "const { join } = await import('node:path');",
      "const { defineChallenge } = await import('@platform/challenge-sdk');",
      "const master = await import('@platform/master');",
      "const challenge = defineChallenge({ slug: 'version-probe', name: 'version probe', version: '1.0.0', routes: () => {}, weights: () => ({}) });",
      "const running = await challenge.start({ host: '127.0.0.1', port: 0, dataDir: mkdtempSync(join(tmpdir(), 'sdk-version-')), env: { LOG_LEVEL: 'error', CHALLENGE_TOKEN: 'version-probe-token-0123456789abcdef' } });",
      "const served = await (await fetch(running.url + '/version')).json();",
      "await running.close();",
      "console.log(JSON.stringify({ sdk: served.sdk_version, master: master.MASTER_VERSION, entry: import.meta.resolve('@platform/master') }));",
    ].join("\n");
    const result = await run(process.execPath, ["--input-type=module", "-e", script], repo);
    expect(result.code, result.output).toBe(0);
    const reported = JSON.parse(result.output) as { sdk: string; master: string; entry: string };
    expect(reported.entry).toMatch(/\/packages\/master\/dist\/index\.js$/);
    expect(reported).toMatchObject({
      sdk: versionOf("challenge-sdk"),
      master: versionOf("master"),
    });
  });
});
