import { describe, expect, it } from "vitest";
import { bundlePathProblem, MAX_PATH_CHARS, MAX_SEGMENT_CHARS } from "./bundle-path.js";

describe("bundlePathProblem", () => {
  it.each([
    "architecture.py",
    "lib/blocks.py",
    "configs/base-run.yaml",
    "a/b/c/d_e.json",
    "README.md",
    "notes.txt",
    "pyproject.toml",
  ])("accepts %s", (path) => {
    expect(bundlePathProblem(path, true)).toBeNull();
  });

  it.each([
    ["/etc/passwd.txt", "absolute"],
    ["C:/x.py", "absolute"],
    ["../x.py", "traversal"],
    ["a/../../x.py", "traversal"],
    ["a\\..\\x.py", "traversal"],
    ["./x.py", "invalid"],
    ["a//x.py", "invalid"],
    [".hidden.py", "invalid"],
    ["__MACOSX/._architecture.py", "invalid"],
    ["my file.py", "invalid"],
    ["a\u0000.py", "invalid"],
    ["caf\u00e9.py", "invalid"],
    ["run.sh", "extension"],
    ["model.pt", "extension"],
    ["lib.so", "extension"],
    ["x.py.bin", "extension"],
    ["Makefile", "extension"],
  ])("refuses %j (%s)", (path, rule) => {
    const problem = bundlePathProblem(path, true);
    expect(problem?.rule).toBe(rule);
    expect(problem?.message).toContain(rule === "invalid" ? JSON.stringify(path) : path);
  });

  it("bounds segment and path lengths so every accepted path fits a ustar header", () => {
    // ustar: a name of at most 100 bytes after a prefix of at most 155, split at a "/". With
    // segments of at most 64 and "bundle/" + path at most 167, such a split always exists.
    expect(MAX_SEGMENT_CHARS).toBeLessThanOrEqual(64);
    expect("bundle/".length + MAX_PATH_CHARS).toBeLessThanOrEqual(100 + 1 + 64 + 2);
    const segment = "s".repeat(MAX_SEGMENT_CHARS);
    const path = `${segment}/${segment}/${"t".repeat(MAX_PATH_CHARS - 2 * MAX_SEGMENT_CHARS - 5)}.py`;
    expect(path.length).toBe(MAX_PATH_CHARS);
    expect(bundlePathProblem(path, true)).toBeNull();
    expect(bundlePathProblem(`${"s".repeat(MAX_SEGMENT_CHARS + 1)}.py`, true)?.rule).toBe(
      "invalid",
    );
    expect(bundlePathProblem(`a/${"s".repeat(MAX_PATH_CHARS)}.py`, true)?.rule).toBe("invalid");
  });

  it("leaves the extension rule out for directories", () => {
    expect(bundlePathProblem("lib", false)).toBeNull();
    expect(bundlePathProblem("lib", true)?.rule).toBe("extension");
  });
});
