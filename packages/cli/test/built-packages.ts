// The built packages, for the tests that run what users install: dist/ of core, the SDK, the
// chain, the master and the CLI, rebuilt when older than their sources. Test files run in
// parallel processes, so a build is taken under core's data-dir lock: one process builds, the
// others wait and then find it fresh.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DataDirLockedError, lockDataDir } from "@platform/core";

/** The repository's root folder. */
export const repo = fileURLToPath(new URL("../../../", import.meta.url));

/** Run a command to completion (outside this vitest worker): exit code and all it printed. */
export function run(
  command: string,
  args: string[],
  cwd: string,
  extraEnv: Record<string, string> = {},
): Promise<{ code: number | null; output: string }> {
  // The child must not think it runs inside this vitest worker.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => !/^(__)?VITEST/.test(key) && key !== "NODE_OPTIONS",
    ),
  );
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      env: { ...env, ...extraEnv },
      stdio: ["ignore", "pipe", "pipe"],
    });
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

/** Newest modification time of the files under `paths` (folders walked; tests are not built). */
function newest(paths: string[]): number {
  let latest = 0;
  const visit = (path: string) => {
    if (!existsSync(path)) return;
    const stat = statSync(path);
    if (stat.isDirectory()) for (const entry of readdirSync(path)) visit(join(path, entry));
    else if (!path.endsWith(".test.ts")) latest = Math.max(latest, stat.mtimeMs);
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
  ["chain", ["dist/index.js", "dist/index.d.ts", "dist/local/index.js", "dist/local/index.d.ts"]],
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

function staleBuilds() {
  return BUILDS.filter(({ outputs, inputs }) => {
    if (!outputs.every((file) => existsSync(file))) return true;
    return Math.min(...outputs.map((file) => statSync(file).mtimeMs)) <= newest(inputs);
  });
}

/** Whether every package's dist/ is newer than all of its sources (so dist/ is what they say). */
export function builtPackagesAreFresh(): boolean {
  return staleBuilds().length === 0;
}

/** Build the packages whose dist/ is older than any of their sources (in dependency order). */
export async function ensureBuilt(): Promise<void> {
  if (staleBuilds().length === 0) return;
  const lockDir = join(repo, ".platform", "tmp");
  mkdirSync(lockDir, { recursive: true });
  let release: (() => Promise<void>) | undefined;
  for (const started = Date.now(); !release; ) {
    try {
      release = await lockDataDir(lockDir, { file: "build.lock" });
    } catch (error) {
      if (!(error instanceof DataDirLockedError) || Date.now() - started > 280_000) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  try {
    // Another process may have built while this one waited.
    const stale = staleBuilds();
    if (stale.length === 0) return;
    const args = ["run", "build", ...stale.flatMap(({ workspace }) => ["-w", workspace])];
    const result = await run("npm", args, repo);
    if (result.code !== 0) throw new Error(`npm ${args.join(" ")} failed:\n${result.output}`);
  } finally {
    await release();
  }
}
