// The committed launcher, bin/platform.js: what `npx platform` runs. It must exist before any
// build (npm links a bin only if its target exists at install time), run the built CLI when
// there is one, and the sources otherwise. Layouts are made under <repo>/.platform/tmp, so the
// launcher finds tsx in this repository's node_modules as it would in a fresh clone.
import { spawn } from "node:child_process";
import { once } from "node:events";
import {
  accessSync,
  constants,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { repo, run } from "./built-packages.js";

const cli = join(repo, "packages", "cli");
const launcher = join(cli, "bin", "platform.js");
const manifest = JSON.parse(readFileSync(join(cli, "package.json"), "utf8")) as {
  version: string;
  bin: Record<string, string>;
  files: string[];
};

const layouts: string[] = [];
afterAll(() => {
  for (const dir of layouts) rmSync(dir, { recursive: true, force: true });
});

/** A copy of the CLI package's layout: the launcher, and `src`/`dist` as given. */
function layout(parts: { src?: "real" | Record<string, string>; dist?: Record<string, string> }) {
  mkdirSync(join(repo, ".platform", "tmp"), { recursive: true });
  const root = mkdtempSync(join(repo, ".platform", "tmp", "launcher-"));
  layouts.push(root);
  mkdirSync(join(root, "bin"));
  copyFileSync(launcher, join(root, "bin", "platform.js"));
  if (parts.src === "real") symlinkSync(join(cli, "src"), join(root, "src"));
  for (const [folder, files] of [
    ["src", parts.src === "real" ? undefined : parts.src],
    ["dist", parts.dist],
  ] as const) {
    if (!files) continue;
    mkdirSync(join(root, folder));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(root, folder, name), text);
  }
  return join(root, "bin", "platform.js");
}

describe("bin/platform.js", () => {
  it("is what package.json's bin names: a committed, executable node script, shipped", async () => {
    expect(manifest.bin).toEqual({ platform: "./bin/platform.js" });
    expect(manifest.files).toContain("bin");
    expect(readFileSync(launcher, "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);
    accessSync(launcher, constants.X_OK);
    // Not a build output: git keeps it (a fresh clone has it), where dist/ is ignored.
    const ignored = await run("git", ["check-ignore", "-q", "packages/cli/bin/platform.js"], repo);
    expect(ignored.code).toBe(1);
    const dist = await run("git", ["check-ignore", "-q", "packages/cli/dist/cli.js"], repo);
    expect(dist.code).toBe(0);
  });

  it("runs the CLI from its sources when dist/ is missing (a fresh clone)", async () => {
    const result = await run(process.execPath, [layout({ src: "real" }), "--version"], repo);
    expect(result.output.trim()).toBe(manifest.version);
    expect(result.code).toBe(0);
  }, 60_000);

  it("runs the built CLI when there is one, with the arguments given", async () => {
    const bin = layout({
      src: "real",
      dist: { "cli.js": "console.log(JSON.stringify(['dist', ...process.argv.slice(2)]));\n" },
    });
    const result = await run(process.execPath, [bin, "keys", "--json"], repo);
    expect(JSON.parse(result.output)).toEqual(["dist", "keys", "--json"]);
    // PLATFORM_CLI_SOURCE=1 prefers the sources to a build that may be stale.
    const forced = await run(process.execPath, [bin, "--version"], repo, {
      PLATFORM_CLI_SOURCE: "1",
    });
    expect(forced.output.trim()).toBe(manifest.version);
  }, 60_000);

  it("passes the exit code back, and a SIGTERM on to the sources' process", async () => {
    const bin = layout({
      src: {
        "cli.ts": [
          "const code: number = Number(process.argv[2] ?? 0);",
          "if (process.argv[3] !== 'wait') process.exit(code);",
          "process.on('SIGTERM', () => { console.log('got SIGTERM'); process.exit(code); });",
          "console.log('waiting');",
          "setInterval(() => {}, 1000);",
        ].join("\n"),
      },
    });
    expect((await run(process.execPath, [bin, "3"], repo)).code).toBe(3);

    const child = spawn(process.execPath, [bin, "7", "wait"], {
      cwd: repo,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let output = "";
    await new Promise<void>((resolve) => {
      child.stdout.on("data", (chunk) => {
        output += chunk;
        if (output.includes("waiting")) resolve();
      });
    });
    child.kill("SIGTERM");
    const [code] = await once(child, "close");
    expect(output).toContain("got SIGTERM");
    expect(code).toBe(7);
  }, 60_000);

  it("says what to do when there is neither a build nor the sources", async () => {
    const result = await run(process.execPath, [layout({}), "--version"], repo);
    expect(result.code).toBe(1);
    expect(result.output).toMatch(
      /^error: the platform CLI cannot run: .*Reinstall @platform\/cli/,
    );
  });
});
