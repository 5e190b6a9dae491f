import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deflateRawSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { readZip } from "./read-zip.js";
import { writeZip, type ZipEntrySpec, zipFiles } from "./write-zip.js";

const ARCH = { name: "architecture.py", data: "def build_model(ctx):\n    return None\n" };
const TRAIN = { name: "training.py", data: "def train(ctx):\n    pass\n" };

/** Two ordinary files plus `extra`. */
function zipWith(extra: readonly ZipEntrySpec[] = []): Buffer {
  return writeZip([ARCH, TRAIN, ...extra]);
}

async function refusal(zip: Buffer, options?: Parameters<typeof readZip>[1]) {
  const result = await readZip(zip, options);
  if (result.ok) throw new Error("expected a refusal");
  return result.error;
}

describe("readZip", () => {
  it("reads every file's bytes in archive order, binary ones included, directories aside", async () => {
    const binary = Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x00, 0xff]);
    const result = await readZip(
      zipWith([
        { name: "lib/", data: "" },
        { name: "lib/blocks.py", data: "X = 1\n", method: 0 },
        { name: "native.so", data: binary },
        { name: ".env", data: "A=1\n" },
      ]),
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.map((file) => file.path)).toEqual([
      "architecture.py",
      "training.py",
      "lib/blocks.py",
      "native.so",
      ".env",
    ]);
    expect(result.value[2]!.data.toString()).toBe("X = 1\n");
    expect(result.value[3]!.data.equals(binary)).toBe(true);
  });

  it.each<[string, ZipEntrySpec[], string, string]>([
    [
      "a symlink",
      [{ name: "lib/x.py", data: "/etc/passwd", unixMode: 0o120777 }],
      "symlink",
      "archive holds a symlink: lib/x.py",
    ],
    [
      "a symlink with a bad name",
      [{ name: "../x", data: "/", unixMode: 0o120777 }],
      "symlink",
      "symlink: ../x",
    ],
    ["a fifo", [{ name: "pipe.txt", unixMode: 0o010644 }], "special_file", "special file"],
    [
      "a traversal",
      [{ name: "../../etc/cron.d/x.py", data: "x" }],
      "invalid_path",
      "leaves the archive: ../../etc/cron.d/x.py",
    ],
    [
      "an absolute name",
      [{ name: "/tmp/x.py", data: "x" }],
      "invalid_path",
      "absolute path: /tmp/x.py",
    ],
    ["a drive letter", [{ name: "C:/x.py", data: "x" }], "invalid_path", "absolute path"],
    [
      "a backslash traversal",
      [{ name: "..\\x.py", data: "x" }],
      "invalid_path",
      "leaves the archive",
    ],
    ["a backslash", [{ name: "a\\x.py", data: "x" }], "invalid_path", "not a plain relative name"],
    [
      "an empty segment",
      [{ name: "a//x.py", data: "x" }],
      "invalid_path",
      "not a plain relative name",
    ],
    [
      "a control character",
      [{ name: "a\u001b[2Jx.py", data: "x" }],
      "invalid_path",
      "not a plain relative name",
    ],
    [
      "a non-UTF-8 name",
      [{ name: Buffer.from([0x61, 0xe9, 0x2e, 0x70, 0x79]), data: "x" }],
      "invalid_path",
      "not UTF-8",
    ],
    [
      "a duplicate",
      [{ name: "training.py", data: "evil()\n" }],
      "duplicate_path",
      "archive holds training.py twice",
    ],
    [
      "a case twin",
      [{ name: "Training.py", data: "x" }],
      "duplicate_path",
      "differ only in case: training.py and Training.py",
    ],
    [
      "a file used as a directory",
      [
        { name: "lib.py", data: "x" },
        { name: "lib.py/x.py", data: "y" },
      ],
      "directory_conflict",
      "lib.py both as a file and as a directory",
    ],
    [
      "a directory entry with contents",
      [{ name: "lib/", data: "payload" }],
      "directory_conflict",
      "directory entry that is a file: lib/",
    ],
    [
      "a directory stored as a file",
      [{ name: "pkg.py", unixMode: 0o040755 }],
      "directory_conflict",
      "directory stored as a file: pkg.py",
    ],
    [
      "an encrypted entry",
      [{ name: "x.py", data: "x", flags: 1 }],
      "unreadable_entry",
      "encrypted entry: x.py",
    ],
    [
      "bzip2 compression",
      [{ name: "x.py", data: "x", method: 12 }],
      "unreadable_entry",
      "method 12",
    ],
  ])("refuses %s", async (_, extra, code, message) => {
    const error = await refusal(zipWith(extra));
    expect(error.code).toBe(code);
    expect(error.message).toContain(message);
  });

  it("applies the caller's checkPath after the safe-path rules, and names the archive with noun", async () => {
    const onlyPython = (path: string, isFile: boolean) =>
      isFile && !path.endsWith(".py") ? `not python: ${path}` : null;
    expect(
      await refusal(zipWith([{ name: "run.sh", data: "x" }]), { checkPath: onlyPython }),
    ).toEqual({
      code: "path_refused",
      message: "not python: run.sh",
    });
    // A directory is offered as such; an unsafe name never reaches the hook.
    expect((await readZip(zipWith([{ name: "lib/" }]), { checkPath: onlyPython })).ok).toBe(true);
    expect(
      await refusal(zipWith([{ name: "/x.sh", data: "x" }]), {
        checkPath: onlyPython,
        noun: "bundle",
      }),
    ).toEqual({ code: "invalid_path", message: "bundle holds an absolute path: /x.sh" });
  });

  it("names the rule a checkPath gives, so a caller can answer its own code", async () => {
    const rules = (path: string, isFile: boolean) =>
      isFile && path.endsWith(".pt")
        ? { rule: "weights_file", message: `no weights: ${path}` }
        : null;
    expect(await refusal(zipWith([{ name: "w.pt", data: "x" }]), { checkPath: rules })).toEqual({
      code: "path_refused",
      message: "no weights: w.pt",
      rule: "weights_file",
    });
  });

  it("refuses one file over maxFileBytes from its declared size, before inflating it", async () => {
    const limits = { maxFiles: 10, maxUnpackedBytes: 1024 * 1024, maxFileBytes: 100 };
    expect(
      (await readZip(zipWith([{ name: "a.txt", data: "x".repeat(100) }]), { limits })).ok,
    ).toBe(true);
    expect(
      await refusal(zipWith([{ name: "a.txt", data: "x", declaredSize: 101 }]), {
        limits,
        noun: "agent ZIP",
      }),
    ).toEqual({
      code: "file_too_large",
      message: "agent ZIP holds a.txt, which unpacks to more than 100 bytes",
    });
  });

  it("refuses more than 200 files, naming where it stopped", async () => {
    const many = Array.from({ length: 199 }, (_, i) => ({ name: `m/f${i}.py`, data: "" }));
    expect((await readZip(zipWith(many.slice(0, 198)))).ok).toBe(true);
    const error = await refusal(zipWith(many));
    expect(error).toMatchObject({ code: "too_many_files" });
    expect(error.message).toBe("archive holds more than 200 files (stopped at m/f198.py)");
  });

  it("refuses a directory listing of thousands of entries before reading any", async () => {
    const dirs = Array.from({ length: 5000 }, (_, i) => ({ name: `d${i}/` }));
    const error = await refusal(zipWith(dirs));
    expect(error).toMatchObject({
      code: "too_many_files",
      message: expect.stringContaining("5002 entries"),
    });
  });

  it("refuses more than 2 MiB unpacked from the declared sizes, before inflating anything", async () => {
    const half = "x".repeat(1024 * 1024);
    expect((await readZip(zipWith([{ name: "a.txt", data: half }]))).ok).toBe(true);
    const error = await refusal(
      zipWith([
        { name: "a.txt", data: half },
        { name: "b.txt", data: half },
        // Never inflated: the listing stops at b.txt.
        { name: "c.txt", data: "ignored", declaredSize: 0xffffffff },
      ]),
    );
    expect(error).toMatchObject({
      code: "unpacked_too_large",
      message: "archive unpacks to more than 2 MiB (stopped at b.txt)",
    });
  });

  it("is zip-bomb safe: an entry that lies about its size stops inflating at the declared size", async () => {
    // 64 MiB of zeros deflate to 64 KiB; the headers claim 100 bytes.
    const bomb = deflateRawSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 });
    const zip = zipWith([{ name: "bomb.txt", packed: bomb, declaredSize: 100 }]);
    const before = process.memoryUsage().arrayBuffers;
    const error = await refusal(zip);
    expect(error).toMatchObject({ code: "unpacked_too_large" });
    expect(error.message).toBe(
      "archive holds bomb.txt, which inflates past its declared 100 bytes",
    );
    // Nothing near the 64 MiB payload was ever allocated.
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(16 * 1024 * 1024);
  });

  it("refuses an entry whose bytes do not match its CRC or declared size", async () => {
    const short = await refusal(zipWith([{ name: "x.py", data: "abcdef", declaredSize: 10 }]));
    expect(short).toMatchObject({
      code: "invalid_zip",
      message: "x.py: holds 6 bytes where the ZIP declares 10",
    });
    const zip = zipWith([{ name: "x.py", data: "hello world", method: 0 }]);
    zip[zip.indexOf("hello world")] = "j".charCodeAt(0);
    expect(await refusal(zip)).toMatchObject({
      code: "invalid_zip",
      message: "x.py: CRC mismatch",
    });
  });

  it.runIf(hasZip())("catches a symlink stored by a real archiver (zip -y)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bundle-"));
    try {
      writeFileSync(join(dir, "architecture.py"), ARCH.data);
      writeFileSync(join(dir, "training.py"), TRAIN.data);
      symlinkSync("/etc/hostname", join(dir, "data.txt"));
      execFileSync(
        "zip",
        ["-q", "-y", "-X", "b.zip", "architecture.py", "training.py", "data.txt"],
        { cwd: dir },
      );
      const error = await refusal(readFileSync(join(dir, "b.zip")));
      expect(error).toMatchObject({
        code: "symlink",
        message: "archive holds a symlink: data.txt",
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it("reads back what zipFiles wrote, sorted, the same bytes for the same files", async () => {
    const files = [
      { path: "src/b.py", data: "print('b')\n" },
      { path: "agent.py", data: new Uint8Array([0, 1, 2, 255]) },
    ];
    const zip = zipFiles(files);
    expect(zipFiles([...files].reverse()).equals(zip)).toBe(true);
    const read = await readZip(zip);
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect(read.value.map((entry) => entry.path)).toEqual(["agent.py", "src/b.py"]);
    expect(Buffer.from(read.value[0]!.data)).toEqual(Buffer.from([0, 1, 2, 255]));
    expect(Buffer.from(read.value[1]!.data).toString()).toBe("print('b')\n");
  });
  it("refuses what is not a ZIP, or a cut one", async () => {
    expect(await refusal(Buffer.from("just some text"))).toMatchObject({ code: "invalid_zip" });
    const zip = zipWith();
    expect(await refusal(zip.subarray(0, zip.length - 30))).toMatchObject({ code: "invalid_zip" });
  });
});

function hasZip(): boolean {
  try {
    execFileSync("zip", ["-v"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
