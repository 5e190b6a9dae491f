import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { claimDevDataDir, DEV_LOCK_FILE } from "./_dev-data-dir.js";

describe("claimDevDataDir", () => {
  let dir: string;
  beforeEach(() => {
    dir = join(mkdtempSync(join(tmpdir(), "cli-dev-dir-")), "dev");
  });
  afterEach(() => rmSync(join(dir, ".."), { recursive: true, force: true }));

  it("creates the dir, empties it when fresh, and releases the lock", async () => {
    mkdirSync(join(dir, "master"), { recursive: true });
    writeFileSync(join(dir, "master", "old"), "x");
    const release = await claimDevDataDir(dir, true);
    expect(readFileSync(join(dir, DEV_LOCK_FILE), "utf8")).toBe(`${process.pid}@${hostname()}`);
    expect(existsSync(join(dir, "master"))).toBe(false);
    await release();
    expect(existsSync(join(dir, DEV_LOCK_FILE))).toBe(false);
  });

  it("keeps a kept dir's contents", async () => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "state"), "x");
    await (await claimDevDataDir(dir, false))();
    expect(readFileSync(join(dir, "state"), "utf8")).toBe("x");
  });

  it("refuses a dir another live run holds, and deletes nothing of it", async () => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "state"), "x");
    // The parent of this test runner is alive and on this host: another `platform dev`.
    writeFileSync(join(dir, DEV_LOCK_FILE), `${process.ppid}@${hostname()}`);
    await expect(claimDevDataDir(dir, true)).rejects.toThrow(
      `is in use by another platform dev (pid ${process.ppid})`,
    );
    expect(readFileSync(join(dir, "state"), "utf8")).toBe("x");
    expect(readFileSync(join(dir, DEV_LOCK_FILE), "utf8")).toBe(`${process.ppid}@${hostname()}`);
    // The same process cannot claim it twice either.
    rmSync(join(dir, DEV_LOCK_FILE));
    const release = await claimDevDataDir(dir, false);
    await expect(claimDevDataDir(dir, true)).rejects.toThrow("is in use by another platform dev");
    expect(readFileSync(join(dir, "state"), "utf8")).toBe("x");
    await release();
  });

  it("takes over the lock of a run that is gone", async () => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, DEV_LOCK_FILE), "2147483646\n");
    await (await claimDevDataDir(dir, true))();
  });
});
