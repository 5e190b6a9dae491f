// The archive checks of router.submission, as plain functions: strict base64 (moved here from
// the scoring challenge's decode-base64, which both reference challenges had written for
// themselves), the size limits, and readZip's refusals under the archive's own codes.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  decodeArchiveBase64,
  maxBase64Length,
  readArchive,
  type SubmissionArchive,
} from "./submission-archive.js";
import { writeZip } from "./write-zip.js";

const MAX_BASE64_CHARS = 7.5 * 1024 * 1024;
const bundle: SubmissionArchive = {
  field: "code",
  maxBytes: (MAX_BASE64_CHARS / 4) * 3,
  noun: "bundle",
  limits: { maxFiles: 3, maxUnpackedBytes: 1024 },
  checkPath: (path, isFile) =>
    isFile && !path.endsWith(".py")
      ? { rule: "bundle_forbidden_extension", message: `no: ${path}` }
      : null,
  codes: { archive_too_large: "bundle_too_large", symlink: "bundle_symlink" },
};

describe("decodeArchiveBase64", () => {
  it("decodes canonical base64", () => {
    const bytes = Buffer.from([0x50, 0x4b, 0x03, 0x04, 0xff, 0x00, 0x10]);
    expect(decodeArchiveBase64(bytes.toString("base64"), bundle)).toEqual({ ok: true, bytes });
  });

  it.each([
    ["UEsDBA=!", /"!" at position 7/],
    ["UEsDBA==\n", /"\\n" at position 8/],
    ["UEsDB", /multiple of 4/],
    ["UE=sDBA=", /final padding/],
    ["U===", /final padding/],
    ["", /empty/],
    ["UEsD-A__", /"-" at position 4/],
    // "QQ==" and "QR==" decode to the same byte: only the canonical spelling is taken.
    ["QR==", /unused bits/],
  ])("refuses %j with 400 invalid_base64", (code, message) => {
    const result = decodeArchiveBase64(code, bundle);
    expect(result).toMatchObject({ ok: false, error: { code: "invalid_base64", status: 400 } });
    if (!result.ok) expect(result.error.message).toMatch(message);
  });

  it("refuses a string over the limit with 413 before looking at its characters", () => {
    const result = decodeArchiveBase64("!".repeat(MAX_BASE64_CHARS + 1), bundle);
    expect(result).toMatchObject({
      ok: false,
      error: { code: "bundle_too_large", status: 413, reason: "archive_too_large" },
    });
    if (!result.ok) expect(result.error.message).toContain("7.5 MiB");
    // Exactly at the limit is fine, and a 7 MiB string does not overflow the stack.
    expect(maxBase64Length(bundle)).toBe(MAX_BASE64_CHARS);
    expect(decodeArchiveBase64("A".repeat(MAX_BASE64_CHARS), bundle).ok).toBe(true);
  });
});

describe("readArchive", () => {
  it("answers the bytes, their sha256 and the files", async () => {
    const zip = writeZip([{ name: "a.py", data: "x = 1\n" }]);
    const read = await readArchive(zip, bundle);
    expect(read).toEqual({
      ok: true,
      value: {
        bytes: zip,
        sha256: createHash("sha256").update(zip).digest("hex"),
        files: [{ path: "a.py", data: Buffer.from("x = 1\n") }],
      },
    });
  });

  it("refuses with the archive's codes: sizes 413, the rest 400, a named rule as its code", async () => {
    const cases: [Buffer, number, string][] = [
      [Buffer.alloc(bundle.maxBytes + 1), 413, "bundle_too_large"],
      [Buffer.from("not a zip"), 400, "invalid_zip"],
      [
        writeZip([
          { name: "a.py", data: "" },
          { name: "b.py", data: "" },
          { name: "c.py", data: "" },
          { name: "d.py", data: "" },
        ]),
        413,
        "too_many_files",
      ],
      [
        writeZip([{ name: "lib/x.py", data: "/etc/passwd", unixMode: 0o120777 }]),
        400,
        "bundle_symlink",
      ],
      [writeZip([{ name: "run.sh", data: "x" }]), 400, "bundle_forbidden_extension"],
      [writeZip([{ name: "../x.py", data: "x" }]), 400, "invalid_path"],
    ];
    for (const [zip, status, code] of cases) {
      const read = await readArchive(zip, bundle);
      expect(read, code).toMatchObject({ ok: false, error: { status, code } });
    }
  });
});
