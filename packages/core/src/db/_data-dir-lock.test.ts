import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { lockDataDir } from "./_data-dir-lock.js";

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
});
