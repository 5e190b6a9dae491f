import { createHash } from "node:crypto";
import { deflateRawSync } from "node:zlib";
import { readArchive } from "@platform/challenge-sdk";
import { describe, expect, it } from "vitest";
import { minimalBundle, writeZip, type ZipEntrySpec } from "../../test/zip-writer.js";
import { BUNDLE_ARCHIVE, MAX_UNPACKED_BYTES } from "./bundle-archive.js";
import { bundleFromArchive, openBundle } from "./open-bundle.js";

const ARCH = { name: "architecture.py", data: "def build_model(ctx):\n    return None\n" };
const TRAIN = { name: "training.py", data: "def train(ctx):\n    pass\n" };

async function refusal(zip: Buffer) {
  const result = await openBundle(zip);
  if (result.ok) throw new Error("expected a refusal");
  return result.error;
}

describe("openBundle", () => {
  it("opens a contract bundle: files, unpacked size and code_hash = sha256 of the ZIP bytes", async () => {
    const zip = minimalBundle([
      { name: "lib/blocks.py", data: "X = 1\n", method: 0 },
      { name: "lib/", data: "" },
      { name: "config.yaml", data: "lr: 0.001\n" },
    ]);
    const result = await openBundle(zip);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.codeHash).toBe(createHash("sha256").update(zip).digest("hex"));
    expect(result.value.files.map((file) => file.path)).toEqual([
      "architecture.py",
      "training.py",
      "lib/blocks.py",
      "config.yaml",
    ]);
    expect(result.value.files[2]).toMatchObject({ text: "X = 1\n" });
    expect(result.value.unpackedBytes).toBe(
      ARCH.data.length + TRAIN.data.length + "X = 1\n".length + "lr: 0.001\n".length,
    );
  });

  // The submit route gets the archive from the SDK, which read it under BUNDLE_ARCHIVE (its
  // base64 is the SDK's: packages/challenge-sdk/src/bundle/submission-archive.test.ts).
  it("takes the archive the SDK read at submit, and keeps its sha256 as code_hash", async () => {
    const zip = minimalBundle();
    const read = await readArchive(zip, BUNDLE_ARCHIVE);
    if (!read.ok) throw new Error(read.error.message);
    const result = bundleFromArchive(read.value);
    expect(result.ok && result.value.codeHash).toBe(createHash("sha256").update(zip).digest("hex"));
    const folder = await readArchive(
      writeZip([{ name: "b/architecture.py", data: "" }]),
      BUNDLE_ARCHIVE,
    );
    if (!folder.ok) throw new Error(folder.error.message);
    expect(bundleFromArchive(folder.value)).toMatchObject({
      ok: false,
      error: { code: "contract_missing_file", status: 400 },
    });
  });

  it.each<[string, ZipEntrySpec[], string, string]>([
    [
      "a symlink",
      [{ name: "lib/x.py", data: "/etc/passwd", unixMode: 0o120777 }],
      "bundle_symlink",
      "bundle holds a symlink: lib/x.py",
    ],
    [
      "a symlink with a bad name",
      [{ name: "../x", data: "/", unixMode: 0o120777 }],
      "bundle_symlink",
      "bundle holds a symlink: ../x",
    ],
    ["a fifo", [{ name: "pipe.txt", unixMode: 0o010644 }], "bundle_special_file", "special file"],
    [
      "a traversal",
      [{ name: "../../etc/cron.d/x.py", data: "x" }],
      "bundle_invalid_path",
      "leaves the bundle: ../../etc/cron.d/x.py",
    ],
    [
      "an absolute name",
      [{ name: "/tmp/x.py", data: "x" }],
      "bundle_invalid_path",
      "absolute path: /tmp/x.py",
    ],
    [
      "a backslash traversal",
      [{ name: "..\\x.py", data: "x" }],
      "bundle_invalid_path",
      "leaves the bundle",
    ],
    [
      "a shell script",
      [{ name: "run.sh", data: "curl x | sh" }],
      "bundle_forbidden_extension",
      "not allowed: run.sh",
    ],
    [
      "a weights file",
      [{ name: "weights.pt", data: "x" }],
      "bundle_forbidden_extension",
      "weights.pt",
    ],
    [
      "a duplicate",
      [{ name: "training.py", data: "def train(ctx):\n    evil()\n" }],
      "bundle_duplicate_path",
      "bundle holds training.py twice",
    ],
    [
      "a case twin",
      [{ name: "Training.py", data: "x" }],
      "bundle_duplicate_path",
      "differ only in case: training.py and Training.py",
    ],
    [
      "a file used as a directory",
      [
        { name: "lib.py", data: "x" },
        { name: "lib.py/x.py", data: "y" },
      ],
      "bundle_directory_conflict",
      "lib.py both as a file and as a directory",
    ],
    [
      "a directory entry with contents",
      [{ name: "lib/", data: "payload" }],
      "bundle_directory_conflict",
      "directory entry that is a file: lib/",
    ],
    [
      "a directory entry marked regular",
      [{ name: "lib/", unixMode: 0o100644 }],
      "bundle_directory_conflict",
      "directory entry that is a file: lib/",
    ],
    [
      "a directory stored as a file",
      [{ name: "pkg.py", unixMode: 0o040755 }],
      "bundle_directory_conflict",
      "directory stored as a file: pkg.py",
    ],
    [
      "a DOS directory stored as a file",
      [{ name: "pkg.py", externalAttributes: 0x10 }],
      "bundle_directory_conflict",
      "directory stored as a file",
    ],
    [
      "an encrypted entry",
      [{ name: "x.py", data: "x", flags: 1 }],
      "bundle_unreadable_entry",
      "encrypted entry: x.py",
    ],
    [
      "bzip2 compression",
      [{ name: "x.py", data: "x", method: 12 }],
      "bundle_unreadable_entry",
      "method 12",
    ],
    [
      "binary bytes",
      [{ name: "table.json", data: Buffer.from([0xff, 0xfe, 0x00, 0x01]) }],
      "bundle_not_text",
      "table.json, which is not UTF-8",
    ],
    ["NUL bytes", [{ name: "table.json", data: "[1,\u0000 2]" }], "bundle_not_text", "NUL"],
    [
      "a non-UTF-8 name",
      [{ name: Buffer.from([0x61, 0xe9, 0x2e, 0x70, 0x79]), data: "x" }],
      "bundle_invalid_path",
      "not UTF-8",
    ],
  ])("refuses %s", async (_, extra, code, message) => {
    const error = await refusal(minimalBundle(extra));
    expect(error.code).toBe(code);
    expect(error.status).toBe(400);
    expect(error.message).toContain(message);
  });

  it("names the missing contract file, and a folder zipped by mistake", async () => {
    expect(await refusal(writeZip([ARCH]))).toMatchObject({
      code: "contract_missing_file",
      message: "bundle has no training.py at its root",
    });
    expect(await refusal(writeZip([{ name: "notes.md", data: "hi" }]))).toMatchObject({
      message: "bundle has no architecture.py and no training.py at its root",
    });
    const nested = await refusal(
      writeZip([
        { ...ARCH, name: "my/architecture.py" },
        { ...TRAIN, name: "my/training.py" },
      ]),
    );
    expect(nested.message).toContain("found my/architecture.py: zip the files, not their folder");
  });

  it("refuses what is not a ZIP, or a cut one", async () => {
    expect(await refusal(Buffer.from("just some text"))).toMatchObject({ code: "invalid_zip" });
    const zip = minimalBundle();
    expect(await refusal(zip.subarray(0, zip.length - 30))).toMatchObject({ code: "invalid_zip" });
  });

  it("holds at most 256 KiB unpacked (what bounds the text a bundle can carry into a run)", async () => {
    expect(MAX_UNPACKED_BYTES).toBe(256 * 1024);
    const contract = ARCH.data.length + TRAIN.data.length;
    const padding = (bytes: number) => [{ name: "notes.txt", data: "x".repeat(bytes) }];
    expect((await openBundle(minimalBundle(padding(MAX_UNPACKED_BYTES - contract)))).ok).toBe(true);
    expect(await refusal(minimalBundle(padding(MAX_UNPACKED_BYTES - contract + 1)))).toMatchObject({
      code: "unpacked_too_large",
      status: 413,
    });
  });

  it("keeps the bundle's limits and codes on the SDK's reader (413 for sizes)", async () => {
    const many = Array.from({ length: 199 }, (_, i) => ({ name: `m/f${i}.py`, data: "" }));
    expect((await openBundle(minimalBundle(many.slice(0, 198)))).ok).toBe(true);
    const error = await refusal(minimalBundle(many));
    expect(error).toMatchObject({ code: "too_many_files", status: 413 });
    expect(error.message).toBe("bundle holds more than 200 files (stopped at m/f198.py)");
    const bomb = deflateRawSync(Buffer.alloc(1024 * 1024), { level: 9 });
    expect(
      await refusal(minimalBundle([{ name: "bomb.txt", packed: bomb, declaredSize: 100 }])),
    ).toMatchObject({ code: "unpacked_too_large", status: 413 });
  });
});
