import type { HttpError } from "@platform/core";
import { describe, expect, it } from "vitest";
import { validateFiles } from "./broker-files.js";

const caps = { maxCount: 4, maxFileBytes: 10, maxTotalBytes: 16 };
const file = (path: string, text = "x", mode?: number) => ({
  path,
  content_base64: Buffer.from(text).toString("base64"),
  ...(mode ? { mode } : {}),
});

function refusal(files: Parameters<typeof validateFiles>[0]): HttpError {
  try {
    validateFiles(files, caps);
  } catch (error) {
    return error as HttpError;
  }
  throw new Error("expected a refusal");
}

describe("validateFiles", () => {
  it("decodes valid files with their modes (default 0644)", () => {
    const placed = validateFiles([file("a.txt", "hi"), file("bin/run", "#!", 0o755)], caps);
    expect(placed).toEqual([
      { path: "a.txt", data: Buffer.from("hi"), mode: 0o644 },
      { path: "bin/run", data: Buffer.from("#!"), mode: 0o755 },
    ]);
    expect(validateFiles(undefined, caps)).toEqual([]);
  });

  it.each([
    ["..", "../x"],
    ["a nested ..", "a/../../x"],
    ["a trailing ..", "a/.."],
    ["an absolute path", "/etc/passwd"],
    ["a NUL", "a\u0000b"],
    ["a newline", "a\nb"],
    ["a dot segment", "a/./b"],
    ["an empty segment", "a//b"],
    ["a trailing slash", "a/"],
    ["a backslash", "a\\b"],
    ["a name over 100 bytes", `d/${"n".repeat(101)}`],
  ])("refuses %s (400 invalid_file, naming the entry)", (_label, path) => {
    const error = refusal([file("ok"), file(path)]);
    expect(error.status).toBe(400);
    expect(error.code).toBe("invalid_file");
    expect(error.message).toMatch(/^files\[1\]/);
  });

  it("refuses non-canonical base64, duplicates, a path under a file, and sizes over the caps", () => {
    expect(refusal([{ path: "a", content_base64: "aGk" }]).code).toBe("invalid_file");
    expect(refusal([{ path: "a", content_base64: "a GVsbG8=" }]).code).toBe("invalid_file");
    expect(refusal([file("a"), file("a")]).message).toContain("twice");
    expect(refusal([file("a"), file("a/b")]).message).toContain("parent");
    expect(refusal([file("big", "x".repeat(11))]).message).toContain("at most 10");
    expect(refusal([file("a", "x".repeat(9)), file("b", "x".repeat(9))]).message).toContain(
      "16 bytes in all",
    );
    expect(refusal([file("a"), file("b"), file("c"), file("d"), file("e")]).message).toContain(
      "At most 4 files",
    );
  });
});
