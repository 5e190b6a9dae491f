// startPlatformDev's own mechanics, against stand-ins for the `platform` binary (real processes,
// real signals): the real `platform dev` is started this way by the agent-eval example's
// end-to-end test, which needs Docker.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startPlatformDev } from "./start-platform-dev.js";
import { waitFor } from "./wait-for.js";

/** Whether a process of this id still exists (signal 0 checks without sending anything). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const root = mkdtempSync(join(tmpdir(), "start-platform-dev-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A stand-in `platform`: a Node script with `body`, its arguments in `args`. */
function script(name: string, body: string): string {
  const file = join(root, `${name}.mjs`);
  writeFileSync(file, `const args = process.argv.slice(2);\n${body}\n`);
  return file;
}

const READY_THEN_WAIT = `
process.on("SIGTERM", () => { console.log("stopping"); process.exit(0); });
console.error("[platform dev] starting with " + JSON.stringify(args) + " LOG_LEVEL=" + process.env.LOG_LEVEL + " GONE=" + process.env.GONE);
console.log("a banner line");
console.log(JSON.stringify({ status: "ready", master_url: "http://127.0.0.1:1", weights_url: "w", admin_token: "t", challenges: [] }));
setInterval(() => {}, 1000);`;

describe("startPlatformDev", () => {
  it("runs `dev --port 0 --json` with the given arguments, resolves on the ready line, and stops it", async () => {
    const dev = await startPlatformDev({
      command: [process.execPath, script("ready", READY_THEN_WAIT)],
      args: ["--challenge", "src/challenge.ts"],
      cwd: root,
      env: { GONE: undefined },
    });
    expect(dev.masterUrl).toBe("http://127.0.0.1:1");
    expect(dev.ready.status).toBe("ready");
    expect(dev.output()).toContain(
      '["dev","--port","0","--json","--challenge","src/challenge.ts"] LOG_LEVEL=warn GONE=undefined',
    );
    expect(await dev.close()).toBe(0);
    expect(await dev.close()).toBe(0);
    expect(dev.output()).toContain("stopping");
  });

  it("fails with what dev printed when it exits before it is ready", async () => {
    const early = script("early", 'console.error("port in use"); process.exit(3);');
    await expect(
      startPlatformDev({ command: [process.execPath, early], cwd: root }),
    ).rejects.toThrow(/exited 3 before it was ready[\s\S]*port in use/);
  });

  it("gives up after timeoutMs and stops the process", async () => {
    // It prints at once and then never gets ready. The deadline leaves a loaded machine time to
    // start node and print (at 500 ms it once gave up before the line came).
    const pidFile = join(root, "silent.pid");
    const silent = script(
      "silent",
      `import { writeFileSync } from "node:fs";
writeFileSync(${JSON.stringify(pidFile)}, String(process.pid));
console.log("still starting");
setInterval(() => {}, 1000);`,
    );
    const timeoutMs = 3_000;
    const started = Date.now();
    await expect(
      startPlatformDev({ command: [process.execPath, silent], cwd: root, timeoutMs }),
    ).rejects.toThrow(/not ready in 3000 ms[\s\S]*still starting/);
    // The script would run forever: it was stopped at the deadline, not at its end.
    expect(Date.now() - started).toBeLessThan(timeoutMs * 4);
    const pid = Number(readFileSync(pidFile, "utf8"));
    await waitFor(() => !isAlive(pid), { what: `the stand-in (pid ${pid}) to be gone` });
  });

  it("runs the project's own node_modules/.bin/platform by default, and says when there is none", async () => {
    const project = join(root, "project");
    const bin = join(project, "node_modules", ".bin");
    mkdirSync(join(project, "src"), { recursive: true });
    mkdirSync(bin, { recursive: true });
    writeFileSync(
      join(bin, "platform"),
      `#!${process.execPath}\nconst args = process.argv.slice(2);\n${READY_THEN_WAIT}\n`,
    );
    chmodSync(join(bin, "platform"), 0o755);
    const dev = await startPlatformDev({ cwd: join(project, "src") });
    expect(dev.masterUrl).toBe("http://127.0.0.1:1");
    await dev.close();
    const bare = mkdtempSync(join(tmpdir(), "no-platform-"));
    try {
      await expect(startPlatformDev({ cwd: bare })).rejects.toThrow(
        /no node_modules\/.bin\/platform/,
      );
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
  });
});
