#!/usr/bin/env node
// The `platform` command as npm links it. This file is committed, not built: npm links a
// workspace's bin only if its target exists at install time, and on a fresh clone dist/ does
// not exist yet. So the link always points here, and this picks what to run:
//   1. the built CLI (dist/cli.js), as in every published install;
//   2. else, in a repository checkout, the TypeScript sources through tsx with the
//      `@platform/source` condition (so the workspace packages need no build either).
// PLATFORM_CLI_SOURCE=1 picks the sources even when dist/ exists (a stale build while editing).
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

const dist = new URL("../dist/cli.js", import.meta.url);
const source = fileURLToPath(new URL("../src/cli.ts", import.meta.url));
const fromSource = process.env.PLATFORM_CLI_SOURCE === "1" || !existsSync(dist);

if (!fromSource) {
  await import(dist.href);
} else if (!existsSync(source)) {
  fail("its dist/ is missing. Reinstall @platform/cli.");
} else {
  let tsx;
  try {
    tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
  } catch {
    fail(
      "it is not built and tsx, which runs it from its sources, is not installed. " +
        "Run `npm install` at the repository root, or build it: `npm run build`.",
    );
  }
  // Export conditions are fixed when a process starts, so the sources run in a child process.
  const child = spawn(
    process.execPath,
    ["--conditions=@platform/source", "--import", tsx, source, ...process.argv.slice(2)],
    { stdio: "inherit" },
  );
  // Ctrl-C and a closed terminal signal the whole process group, so the child has them already
  // (passing them on would be a second signal, which stops `platform dev` without cleaning up):
  // wait for it. SIGTERM, from a service manager or `kill`, names this process only: pass it on.
  const waitForChild = () => {};
  process.on("SIGINT", waitForChild);
  process.on("SIGHUP", waitForChild);
  process.on("SIGTERM", () => child.kill("SIGTERM"));
  child.on("error", (error) => fail(`cannot start node: ${error.message}`));
  child.on("exit", (code, signal) => {
    if (signal) {
      // End the way the child ended, so a caller sees the same signal.
      for (const name of ["SIGINT", "SIGTERM", "SIGHUP"]) process.removeAllListeners(name);
      process.kill(process.pid, signal);
    } else {
      process.exitCode = code ?? 1;
    }
  });
}

function fail(reason) {
  process.stderr.write(`error: the platform CLI cannot run: ${reason}\n`);
  process.exit(1);
}
