import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DataDirLockedError, lockDataDir } from "./data-dir-lock.js";

describe("lockDataDir", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "platform-lock-"));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it("refuses a second open, in this process or by another live one, until released", async () => {
    const release = await lockDataDir(dir);
    expect(await readFile(join(dir, "platform.lock"), "utf8")).toBe(`${process.pid}@${hostname()}`);
    await expect(lockDataDir(dir)).rejects.toThrow(/already open .*only one process may open it/);
    await release();
    const again = await lockDataDir(dir);
    await again();

    // The parent of this test runner is alive and on this host.
    await writeFile(join(dir, "platform.lock"), `${process.ppid}@${hostname()}`);
    await expect(lockDataDir(dir)).rejects.toThrow(new RegExp(`already open \\(${process.ppid}@`));
  });

  it("takes over a lock left by a process that is gone", async () => {
    // pid_max on Linux is at most 2^22, so this pid cannot be running.
    await writeFile(join(dir, "platform.lock"), `${2 ** 23}@${hostname()}`);
    const release = await lockDataDir(dir);
    expect(await readFile(join(dir, "platform.lock"), "utf8")).toBe(`${process.pid}@${hostname()}`);
    await release();
  });

  it("takes a named lock file, and says who holds it", async () => {
    const release = await lockDataDir(dir, { file: "tool.pid" });
    expect(await readFile(join(dir, "tool.pid"), "utf8")).toBe(`${process.pid}@${hostname()}`);
    const refused = await lockDataDir(dir, { file: "tool.pid" }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DataDirLockedError);
    expect(refused).toMatchObject({ dir, file: "tool.pid", pid: process.pid });
    // Another name is another lock.
    await (await lockDataDir(dir))();
    await release();
  });

  it("lets exactly one of several processes racing for it win", async () => {
    const source = new URL("./data-dir-lock.ts", import.meta.url).href;
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
    // Each child tries once, reports, and holds a win until the test has counted every answer
    // (a fixed hold let a slow starter under load find the winner gone and take a stale lock).
    const script = `
      const { lockDataDir } = await import(${JSON.stringify(source)});
      try { await lockDataDir(${JSON.stringify(dir)}, { file: "race.lock" }); console.log("won"); }
      catch (error) { console.log(error.name); }
      setInterval(() => {}, 1000);
    `;
    const children = Array.from({ length: 6 }, () =>
      spawn(process.execPath, ["--import", tsx, "--input-type=module", "-e", script], {
        stdio: ["ignore", "pipe", "inherit"],
      }),
    );
    const outcomes = await Promise.all(
      children.map(async (child) => {
        let out = "";
        while (!out.includes("\n")) {
          const [chunk] = (await once(child.stdout, "data")) as [Buffer];
          out += chunk;
        }
        return out.trim();
      }),
    );
    for (const child of children) child.kill();
    await Promise.all(
      children.map((child) => (child.exitCode === null ? once(child, "close") : null)),
    );
    expect(outcomes.filter((outcome) => outcome === "won")).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === "DataDirLockedError")).toHaveLength(5);
  }, 30_000);
});
