// A throwaway PostgreSQL server of a test's own, on a free loopback port: for tests that stop
// and start the database (readiness during an outage), which must never touch the machine's
// shared server that other suites use. Made with the machine's own binaries (initdb, pg_ctl);
// as root, they run as the `postgres` user (initdb refuses root).
import { execFileSync, spawn } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A private PostgreSQL server: its URL, and the switches a test flips. */
export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication, loopback only). */
  url: string;
  port: number;
  /** Stop the server (fast shutdown: connections are closed); resolves once it is down. */
  stop(): Promise<void>;
  /** Start it again on the same port; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stop it if running and delete its files. */
  close(): Promise<void>;
}

/** Where initdb and pg_ctl are, or why they cannot be used. */
export type PostgresBinaries = { ok: true; dir: string } | { ok: false; reason: string };

/** The machine's PostgreSQL server binaries: `PG_BIN`, else the newest /usr/lib/postgresql/N/bin. */
export function findPostgresBinaries(
  env: Record<string, string | undefined> = process.env,
): PostgresBinaries {
  const candidates: string[] = [];
  if (env["PG_BIN"]) candidates.push(env["PG_BIN"]);
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((name) => /^\d+$/.test(name))
      .sort((a, b) => Number(b) - Number(a));
    for (const version of versions) candidates.push(join(root, version, "bin"));
  }
  for (const dir of candidates) {
    if (existsSync(join(dir, "initdb")) && existsSync(join(dir, "pg_ctl")))
      return { ok: true, dir };
  }
  return {
    ok: false,
    reason: `no initdb and pg_ctl found (PG_BIN, ${root}/<version>/bin); install the PostgreSQL server package`,
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** uid and gid to run the binaries as: the `postgres` user when this process is root. */
function runAs(): { uid: number; gid: number } | undefined {
  if (typeof process.getuid !== "function" || process.getuid() !== 0) return undefined;
  try {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
    return { uid, gid };
  } catch {
    throw new Error("running as root and there is no `postgres` user to run initdb as");
  }
}

function run(command: string, args: string[], user: { uid: number; gid: number } | undefined) {
  return new Promise<void>((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"], ...user });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} exited ${code}: ${stderr.trim()}`)),
    );
  });
}

/**
 * Create and start a private PostgreSQL server (a few seconds). Throws when the binaries are
 * missing: check {@link findPostgresBinaries} first to skip loudly instead.
 * @example const pg = await startPrivatePostgres(); try { await pg.stop(); ... await pg.start(); } finally { await pg.close(); }
 */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const binaries = findPostgresBinaries();
  if (!binaries.ok) throw new Error(binaries.reason);
  const user = runAs();
  const dir = mkdtempSync(join(tmpdir(), "platform-private-pg-"));
  if (user) chownSync(dir, user.uid, user.gid);
  const data = join(dir, "data");
  const port = await freePort();
  const pgCtl = join(binaries.dir, "pg_ctl");
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  await run(join(binaries.dir, "initdb"), ["-D", data, "-A", "trust", "-U", "postgres"], user);
  const start = () =>
    run(
      pgCtl,
      ["-D", data, "-o", options, "-l", join(dir, "log"), "-w", "-t", "60", "start"],
      user,
    );
  const stop = () => run(pgCtl, ["-D", data, "-m", "fast", "-w", "-t", "60", "stop"], user);
  let running = false;
  await start();
  running = true;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async stop() {
      await stop();
      running = false;
    },
    async start() {
      await start();
      running = true;
    },
    async close() {
      try {
        if (running) await stop();
      } finally {
        running = false;
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
