import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { builtPackagesAreFresh } from "./built-packages.js";

const cliSource = fileURLToPath(new URL("../src/cli.ts", import.meta.url));
const cliBundle = fileURLToPath(new URL("../dist/cli.js", import.meta.url));
// tsx's loader by absolute URL: `--import tsx` would resolve from the child's cwd, which may be
// a temporary folder outside the repository.
const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

let fromBundle: boolean | undefined;
/**
 * How to start the CLI. The bundle, as users run it, when every package's dist/ is newer than
 * its sources (CI builds before it tests): a start costs about 0.45 CPU-seconds there and 1.1 s
 * through tsx, which compiles the sources as it loads them, and the CLI suites start it a few
 * hundred times. Otherwise the sources through tsx (the workspace packages resolve to their
 * `src/` through the `@platform/source` export condition), so an edit not yet built is what
 * runs. Decided once per test process: sources do not change under a running suite.
 */
function cliCommand(): string[] {
  fromBundle ??= process.env["PLATFORM_TEST_CLI"] !== "source" && builtPackagesAreFresh();
  return fromBundle
    ? [cliBundle]
    : ["--conditions=@platform/source", "--import", tsxLoader, cliSource];
}

/**
 * Spawn the `platform` CLI as a real process: its bundle when dist/ is fresh, else its sources
 * (see `cliCommand`). `PLATFORM_TEST_CLI=source` always runs the sources.
 */
export function spawnCli(
  args: string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): ChildProcess {
  return spawn(process.execPath, [...cliCommand(), ...args], {
    cwd: options.cwd,
    env: { ...process.env, LOG_LEVEL: "warn", ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** Run the CLI to completion: exit code and everything it printed. */
export function runCli(
  args: string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawnCli(args, options);
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr!.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Wait until the child prints a line matching `pattern` on stdout; returns the match. */
export function waitForOutput(
  child: ChildProcess,
  pattern: RegExp,
  timeoutMs = 30_000,
): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let seen = "";
    const timer = setTimeout(
      () => reject(new Error(`timed out waiting for ${pattern}; output so far:\n${seen}`)),
      timeoutMs,
    );
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const match = seen.match(pattern);
      if (match) {
        clearTimeout(timer);
        child.stdout!.off("data", onData);
        resolve(match);
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before printing ${pattern}; output:\n${seen}`));
    });
  });
}
