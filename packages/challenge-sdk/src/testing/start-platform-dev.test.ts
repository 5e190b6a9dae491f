// startPlatformDev's own mechanics, against stand-ins for the `platform` binary (real processes,
// real signals): the real `platform dev` is started this way by the agent-eval example's
// end-to-end test, which needs Docker.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startPlatformDev } from "./start-platform-dev.js";

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
    const silent = script("silent", "console.log('still starting'); setInterval(() => {}, 1000);");
    const started = Date.now();
    await expect(
      startPlatformDev({ command: [process.execPath, silent], cwd: root, timeoutMs: 500 }),
    ).rejects.toThrow(/not ready in 500 ms[\s\S]*still starting/);
    expect(Date.now() - started).toBeLessThan(5000);
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
