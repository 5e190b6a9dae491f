import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";

/** What `platform dev --json` prints once ready (the fields a test reaches for; the rest as sent). */
export interface PlatformDevReady {
  status: "ready";
  master_url: string;
  weights_url: string;
  admin_token: string;
  challenges: {
    slug: string;
    proxy_url: string;
    internal_url: string;
    challenge_token: string;
    [field: string]: unknown;
  }[];
  [field: string]: unknown;
}

/** Options of {@link startPlatformDev}. */
export interface StartPlatformDevOptions {
  /**
   * How to run `platform`: the executable and its first arguments. Default: the project's own
   * `node_modules/.bin/platform`, looked up from `cwd` (a generated project has `@platform/cli`).
   */
  command?: readonly string[];
  /** Arguments after `dev --port 0 --json`, e.g. `["--challenge", "src/challenge.ts"]`. */
  args?: readonly string[];
  /** Where dev runs (it reads `challenge.config.json` and writes `.platform/dev` there). */
  cwd?: string;
  /** Over `process.env` (LOG_LEVEL defaults to warn); an `undefined` value removes a variable. */
  env?: Record<string, string | undefined>;
  /** Give up (and stop dev) when it is not ready by then; default 150 s. */
  timeoutMs?: number;
}

/** A running `platform dev`. */
export interface PlatformDev {
  /** Its ready line: the master's URL, the admin token, every challenge's proxy URL... */
  ready: PlatformDevReady;
  masterUrl: string;
  /** Everything it printed so far (stdout and stderr), for an assertion's message. */
  output(): string;
  child: ChildProcess;
  /** SIGTERM (SIGKILL after 10 s) and wait for it to exit; resolves to its exit code. */
  close(): Promise<number | null>;
}

const READY = /^\{"status":"ready".*\}$/m;

/**
 * Start `platform dev --port 0 --json` (the whole local platform: a chain, the master, your
 * challenges) for a test, and resolve once its ready line is printed. The SDK does not depend
 * on the CLI: it runs the `platform` the project installed, or the `command` given.
 * @example const dev = await startPlatformDev({ cwd: projectDir }); ...; await dev.close();
 */
export async function startPlatformDev(
  options: StartPlatformDevOptions = {},
): Promise<PlatformDev> {
  const cwd = options.cwd ?? process.cwd();
  const [executable, ...leading] = options.command ?? [projectPlatform(cwd)];
  if (!executable) throw new TypeError("startPlatformDev: `command` is empty");
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries({
    ...process.env,
    LOG_LEVEL: "warn",
    ...options.env,
  })) {
    if (value !== undefined) env[name] = value;
  }
  const child = spawn(
    executable,
    [...leading, "dev", "--port", "0", "--json", ...(options.args ?? [])],
    { cwd, env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let seen = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    seen += chunk.toString();
  });
  let exited: Promise<number | null> | undefined;
  const close = () => {
    exited ??= new Promise<number | null>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) {
        resolve(child.exitCode);
        return;
      }
      const kill = setTimeout(() => child.kill("SIGKILL"), 10_000);
      child.once("close", (code) => {
        clearTimeout(kill);
        resolve(code);
      });
      child.kill("SIGTERM");
    });
    return exited;
  };
  const timeoutMs = options.timeoutMs ?? 150_000;
  const ready = await new Promise<PlatformDevReady>((resolve, reject) => {
    const timer = setTimeout(() => {
      void close();
      reject(new Error(`platform dev was not ready in ${timeoutMs} ms; it printed:\n${seen}`));
    }, timeoutMs);
    child.stdout!.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      const line = READY.exec(seen)?.[0];
      if (line) {
        clearTimeout(timer);
        resolve(JSON.parse(line) as PlatformDevReady);
      }
    });
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(new Error(`platform dev did not start (${executable}): ${error.message}`));
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      reject(new Error(`platform dev exited ${code} before it was ready; it printed:\n${seen}`));
    });
  });
  return { ready, masterUrl: ready.master_url, output: () => seen, child, close };
}

/** The nearest `node_modules/.bin/platform` at or above `from`. */
function projectPlatform(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const bin = join(dir, "node_modules", ".bin", "platform");
    if (existsSync(bin)) return bin;
    if (dirname(dir) === dir) break;
  }
  throw new Error(
    `startPlatformDev: no node_modules/.bin/platform at or above ${from}; install @platform/cli or pass \`command\``,
  );
}
