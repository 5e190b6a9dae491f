import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ustarArchive, ustarPathParts } from "./_ustar.js";

const dir = mkdtempSync(join(tmpdir(), "ustar-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("ustarArchive", () => {
  const long = `${"d".repeat(90)}/${"e".repeat(60)}/file-with-a-long-name.txt`;
  const archive = ustarArchive([
    { path: "dir", type: "directory", mode: 0o755 },
    { path: "dir/hello.txt", type: "file", mode: 0o644, data: Buffer.from("hello\n") },
    { path: "run.sh", type: "file", mode: 0o755, data: Buffer.from("#!/bin/sh\necho hi\n") },
    { path: "empty", type: "file", mode: 0o600, data: Buffer.alloc(0) },
    { path: "block", type: "file", mode: 0o644, data: Buffer.alloc(512, 7) },
    { path: long, type: "file", mode: 0o644, data: Buffer.from("deep") },
    { path: "naïve-ünïcode.txt", type: "file", mode: 0o644, data: Buffer.from("ü") },
  ]);

  it("is a whole number of 512-byte blocks ending in two zero blocks", () => {
    expect(archive.length % 512).toBe(0);
    expect(archive.subarray(-1024).every((byte) => byte === 0)).toBe(true);
  });

  it("is read back by GNU tar: names, modes, sizes and contents", () => {
    const file = join(dir, "a.tar");
    writeFileSync(file, archive);
    const listing = execFileSync("tar", ["-tvf", file, "--numeric-owner"]).toString();
    expect(listing).toMatch(/drwxr-xr-x 0\/0 .* dir\//);
    expect(listing).toMatch(/-rwxr-xr-x 0\/0 .* run\.sh/);
    expect(listing).toMatch(/-rw------- 0\/0 +0 .* empty/);
    expect(listing).toContain(long);
    const out = join(dir, "out");
    execFileSync("mkdir", ["-p", out]);
    execFileSync("tar", ["-xf", file, "-C", out]);
    expect(readFileSync(join(out, "dir/hello.txt"), "utf8")).toBe("hello\n");
    expect(readFileSync(join(out, long), "utf8")).toBe("deep");
    expect(readFileSync(join(out, "naïve-ünïcode.txt"), "utf8")).toBe("ü");
    expect(readFileSync(join(out, "block")).length).toBe(512);
    expect(statSync(join(out, "run.sh")).mode & 0o777).toBe(0o755);
  });

  it("keeps permission bits only and a fixed mtime: no set-id or sticky bit reaches a task", () => {
    const archive = ustarArchive([
      { path: "suid", type: "file", mode: 0o4755, data: Buffer.from("x") },
      { path: "sticky", type: "directory", mode: 0o1777 },
    ]);
    // Header fields: mode at 100, mtime at 136 (octal, NUL-terminated).
    expect(archive.subarray(100, 107).toString()).toBe("0000755");
    expect(archive.subarray(136, 147).toString()).toBe("00000000000");
    const file = join(dir, "setid.tar");
    writeFileSync(file, archive);
    const listing = execFileSync("tar", ["-tvf", file, "--numeric-owner"], { encoding: "utf8" });
    expect(listing).toMatch(/-rwxr-xr-x 0\/0 .* suid/);
    expect(listing).toMatch(/drwxrwxrwx 0\/0 .* sticky\//);
  });

  it("refuses a path ustar cannot hold", () => {
    expect(() => ustarArchive([{ path: "x".repeat(101), type: "file", mode: 0o644 }])).toThrow(
      /too long/,
    );
  });
});

describe("ustarPathParts", () => {
  it("keeps short paths whole and splits long ones at a slash", () => {
    expect(ustarPathParts("a/b")?.prefix.length).toBe(0);
    const parts = ustarPathParts(`${"p".repeat(150)}/${"n".repeat(100)}`)!;
    expect(Buffer.from(parts.prefix).toString()).toBe("p".repeat(150));
    expect(Buffer.from(parts.name).toString()).toBe("n".repeat(100));
  });
  it("cannot encode a name over 100 bytes or a prefix over 155", () => {
    expect(ustarPathParts(`a/${"n".repeat(101)}`)).toBeNull();
    expect(ustarPathParts(`${"p".repeat(156)}/n`)).toBeNull();
  });
});
