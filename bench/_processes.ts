// Child processes a figure needs (servers under test), started and stopped from one place.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

const children = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of children) child.kill("SIGKILL");
});

/** Start a command that says nothing when ready (nginx): pair it with {@link waitForPort}. */
export function spawnProcess(command: string, args: string[]): ChildProcess {
  const child = spawn(command, args, { stdio: "ignore" });
  children.add(child);
  return child;
}

/** Resolve once something accepts connections on 127.0.0.1:`port`. */
export async function waitForPort(port: number, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1", () => {
        socket.end();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    await sleep(100);
  }
  throw new Error(`nothing listens on 127.0.0.1:${port} after ${timeoutMs} ms`);
}

/** Start a command and wait for the first stdout line matching `ready`; returns the child and the match. */
export function startProcess(
  command: string,
  args: string[],
  ready: RegExp,
  timeoutMs = 60_000,
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; match: RegExpMatchArray }> {
  const child = spawn(command, args, {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, LOG_LEVEL: "error", ...env },
  });
  children.add(child);
  return new Promise((resolve, reject) => {
    let seen = "";
    const timer = setTimeout(
      () => reject(new Error(`${command} not ready after ${timeoutMs} ms: ${seen}`)),
      timeoutMs,
    );
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const match = seen.match(ready);
      if (match) {
        clearTimeout(timer);
        child.stdout!.off("data", onData);
        resolve({ child, match });
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited with ${code}: ${seen}`));
    });
  });
}

/**
 * Start a TypeScript file of bench/ in its own Node process (workspace packages from source),
 * with `env` added to this process's environment.
 */
export function startTsProcess(
  file: string,
  args: string[],
  ready: RegExp,
  env: Record<string, string> = {},
) {
  const path = fileURLToPath(new URL(file, import.meta.url));
  return startProcess(
    process.execPath,
    ["--conditions=@platform/source", "--import", "tsx", path, ...args],
    ready,
    60_000,
    env,
  );
}

/** Stop a child and wait for it to exit. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
  children.delete(child);
}

let ticks: number | undefined;

/**
 * CPU time (user + system, every thread) a process has used so far, in ms, from /proc; NaN off
 * Linux. Unlike a rate, a server's CPU time per request hardly moves when neighbours load the
 * machine.
 */
export function processCpuMs(pid: number | undefined): number {
  try {
    ticks ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces): utime and stime are 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticks;
  } catch {
    return Number.NaN;
  }
}
