// `platform challenge create`, then the generated project's own typecheck and test suite, the way
// an author runs them. The project is written under <repo>/.platform/tmp (gitignored), so node's
// resolution walks up to this repository's node_modules: @platform/* are the workspace packages,
// vitest and typescript are the repository's. A project does not know the `@platform/source`
// condition (nor should it), so it imports the SDK's built dist/. Like create-vite's own tests, it
// runs the BUILT CLI (dist/cli.js, with the template it carries in dist/template): the setup
// builds core, the SDK, the master and the CLI unless their dist/ is newer than their sources.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitForOutput } from "./run-cli.js";

const repo = fileURLToPath(new URL("../../../", import.meta.url));
const cliDist = join(repo, "packages", "cli", "dist", "cli.js");

function run(
  command: string,
  args: string[],
  cwd: string,
): Promise<{ code: number | null; output: string }> {
  // The child must not think it runs inside this vitest worker.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => !/^(__)?VITEST/.test(key) && key !== "NODE_OPTIONS",
    ),
  );
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

/** Newest modification time of the files under `paths` (folders walked). */
function newest(paths: string[]): number {
  let latest = 0;
  const visit = (path: string) => {
    if (!existsSync(path)) return;
    const stat = statSync(path);
    if (stat.isDirectory()) for (const entry of readdirSync(path)) visit(join(path, entry));
    else latest = Math.max(latest, stat.mtimeMs);
  };
  for (const path of paths) visit(path);
  return latest;
}

const BUILDS: { workspace: string; outputs: string[]; inputs: string[] }[] = [
  ["core", ["dist/index.js", "dist/index.d.ts"]],
  [
    "challenge-sdk",
    ["dist/index.js", "dist/index.d.ts", "dist/testing/index.js", "dist/testing/index.d.ts"],
  ],
  ["master", ["dist/index.js", "dist/index.d.ts"]],
  ["cli", ["dist/cli.js", "dist/template/package.json"]],
].map(([name, outputs]) => ({
  workspace: `@platform/${name}`,
  outputs: (outputs as string[]).map((file) => join(repo, "packages", name as string, file)),
  inputs: [
    ...["src", "migrations", "scripts", "package.json", "tsup.config.ts"].map((part) =>
      join(repo, "packages", name as string, part),
    ),
    ...(name === "cli" ? [join(repo, "templates", "challenge")] : []),
  ],
}));

/** Build the packages whose dist/ is older than any of their sources (in dependency order). */
async function ensureBuilt(): Promise<void> {
  const stale = BUILDS.filter(({ outputs, inputs }) => {
    if (!outputs.every((file) => existsSync(file))) return true;
    return Math.min(...outputs.map((file) => statSync(file).mtimeMs)) <= newest(inputs);
  });
  if (stale.length === 0) return;
  const args = ["run", "build", ...stale.flatMap(({ workspace }) => ["-w", workspace])];
  const result = await run("npm", args, repo);
  if (result.code !== 0) throw new Error(`npm ${args.join(" ")} failed:\n${result.output}`);
}

describe("a project made by `platform challenge create`", () => {
  let root = "";
  let project = "";

  beforeAll(async () => {
    mkdirSync(join(repo, ".platform", "tmp"), { recursive: true });
    root = mkdtempSync(join(repo, ".platform", "tmp", "generated-"));
    project = join(root, "gen-chal");
    await ensureBuilt();
    const created = await run(
      process.execPath,
      [cliDist, "challenge", "create", "gen-chal", "--out", project, "--name", "Generated"],
      root,
    );
    expect(created.output).toContain("Created Generated (gen-chal 0.1.0)");
    expect(created.code).toBe(0);
  }, 300_000);

  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("typechecks (strict) against the published types", async () => {
    const result = await run(
      process.execPath,
      [join(repo, "node_modules/typescript/bin/tsc"), "--noEmit", "-p", project],
      project,
    );
    expect(result.output).toBe("");
    expect(result.code).toBe(0);
  }, 120_000);

  it("passes its own tests: the conformance suite and the challenge's, under its new slug", async () => {
    const result = await run(
      process.execPath,
      [join(repo, "node_modules/vitest/vitest.mjs"), "run"],
      project,
    );
    expect(result.code, result.output).toBe(0);
    const plain = result.output.replace(/\u001b\[[0-9;]*m/g, "");
    expect(plain).toMatch(/Test Files\s+2 passed \(2\)/);
    expect(plain).toMatch(/Tests\s+\d+ passed \(\d+\)/);
    expect(plain).not.toMatch(/skipped/);
    const passed = Number(plain.match(/Tests\s+(\d+) passed/)?.[1]);
    expect(passed).toBeGreaterThanOrEqual(30);
  }, 240_000);

  it("runs under the built CLI's `platform dev` (TypeScript loaded through tsx's register API)", async () => {
    const child = spawn(
      process.execPath,
      [cliDist, "dev", "--port", "0", "--json", "--data-dir", join(root, "dev-data")],
      {
        cwd: project,
        env: {
          ...process.env,
          ADMIN_TOKEN: "",
          ADMIN_TOKEN_FILE: "",
          DATABASE_URL: "",
          LOG_LEVEL: "warn",
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    try {
      const [line] = await waitForOutput(child, /^\{"status":"ready".*\}$/m, 120_000);
      const ready = JSON.parse(line) as {
        master_url: string;
        challenges: { slug: string; module: string }[];
      };
      expect(ready.challenges).toEqual([
        expect.objectContaining({ slug: "gen-chal", module: join(project, "src", "challenge.ts") }),
      ]);
      const task = await fetch(`${ready.master_url}/challenges/gen-chal/v1/task`);
      expect(task.status).toBe(200);
      expect(await task.json()).toMatchObject({ task_id: "tsp-12-2024" });
    } finally {
      child.kill("SIGTERM");
    }
    const [code] = await once(child, "close");
    expect(code).toBe(0);
  }, 180_000);
});
