import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrokerFile } from "@platform/core";
import { afterAll, describe, expect, it } from "vitest";
import { SandboxRefusal } from "./sandbox-refusal.js";
import { checkTaskFiles, taskFilePathProblem, taskFilesArchive } from "./task-files.js";

/** A file as the broker receives it (the sandbox checks core's wire format). */
function taskFile(path: string, content: string | Uint8Array, mode?: number): BrokerFile {
  const content_base64 = Buffer.from(content).toString("base64");
  return mode === undefined ? { path, content_base64 } : { path, content_base64, mode };
}

const scratch = mkdtempSync(join(tmpdir(), "sdk-task-files-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(SandboxRefusal);
    expect((error as SandboxRefusal).code).toBe("invalid_file");
    return (error as Error).message;
  }
  throw new Error("expected invalid_file");
}

describe("task files", () => {
  it.each([
    ["/etc/passwd", /absolute/],
    ["../escape", /\.\./],
    ["a/../../escape", /\.\./],
    ["a/..", /\.\./],
    ["a\\..\\b", /\\/],
    ["a\u0000b", /NUL/],
    ["a\nb", /control/],
    ["", /empty/],
    ["a//b", /empty/],
    ["./a", /"\."/],
    ["a/", /empty/],
    [`${"x".repeat(101)}`, /too long/],
    [`${"d/".repeat(130)}f`, /too long/],
    // The tar writer stores each parent as "dir/": a 100-byte directory name cannot be written.
    [`${"d".repeat(100)}/f`, /directory in the path is too long/],
    [`a/${"d".repeat(100)}/f`, /directory in the path is too long/],
  ])("refuses the path %j", (path, reason) => {
    expect(taskFilePathProblem(path)).toMatch(reason);
    expect(refusal(() => checkTaskFiles([{ path, content_base64: "" }]))).toMatch(/^files\[0\]: /);
  });

  it("accepts every path it admits all the way into the tar writer", () => {
    for (const path of [`${"d".repeat(99)}/f`, `${"d/".repeat(77)}${"f".repeat(100)}`]) {
      expect(taskFilePathProblem(path)).toBeNull();
      const files = checkTaskFiles([{ path, content_base64: "" }]);
      expect(() => taskFilesArchive(files)).not.toThrow();
    }
  });

  it("refuses a mode above 0o777 (setuid, setgid, sticky) as a weakening", () => {
    for (const mode of [0o4755, 0o2755, 0o1777]) {
      expect(() => checkTaskFiles([{ path: "a", content_base64: "", mode }])).toThrow(
        expect.objectContaining({ code: "weakening_refused" }),
      );
    }
    expect(checkTaskFiles([{ path: "a", content_base64: "", mode: 0o755 }])[0]?.mode).toBe(0o755);
  });

  it("accepts nested relative paths and long ones ustar can split", () => {
    const long = `${"dir/".repeat(30)}file.txt`;
    expect(taskFilePathProblem("a/b/c.txt")).toBeNull();
    expect(taskFilePathProblem(long)).toBeNull();
    expect(taskFilePathProblem("..hidden/x..y")).toBeNull();
  });

  it("refuses non-canonical base64, duplicates, a file that is also a parent, and the caps", () => {
    expect(refusal(() => checkTaskFiles([{ path: "a", content_base64: "abc" }]))).toMatch(/base64/);
    expect(refusal(() => checkTaskFiles([{ path: "a", content_base64: "YW Jj" }]))).toMatch(
      /base64/,
    );
    expect(refusal(() => checkTaskFiles([taskFile("a", "1"), taskFile("a", "2")]))).toMatch(
      /twice/,
    );
    expect(refusal(() => checkTaskFiles([taskFile("a", "1"), taskFile("a/b", "2")]))).toMatch(
      /files\[1\]: a parent/,
    );
    const caps = { maxCount: 2, maxFileBytes: 4, maxTotalBytes: 6 };
    expect(
      refusal(() =>
        checkTaskFiles([taskFile("a", ""), taskFile("b", ""), taskFile("c", "")], caps),
      ),
    ).toMatch(/At most 2 files/);
    expect(refusal(() => checkTaskFiles([taskFile("a", "12345")], caps))).toMatch(
      /5 bytes; at most 4/,
    );
    expect(
      refusal(() => checkTaskFiles([taskFile("a", "1234"), taskFile("b", "123")], caps)),
    ).toMatch(/files\[1\]: .*6 bytes in all/);
    // With no caps (left to the broker) only paths and encoding are checked.
    expect(checkTaskFiles([taskFile("a", "12345")], null)).toHaveLength(1);
  });

  it("puts parent directories before their files", () => {
    const placed = checkTaskFiles([taskFile("x/y/z.txt", "deep"), taskFile("top", "t", 0o700)]);
    const tarPath = join(scratch, "order.tar");
    writeFileSync(tarPath, taskFilesArchive(placed));
    const listing = execFileSync("tar", ["-tf", tarPath], { encoding: "utf8" }).trim().split("\n");
    expect(listing).toEqual(["x/", "x/y/", "x/y/z.txt", "top"]);
  });

  it("builds a tar that a real tar extracts to exactly the files, owned by root, with their modes", () => {
    const long = `${"deep/".repeat(25)}leaf.txt`;
    const files = checkTaskFiles([
      taskFile("run.sh", "#!/bin/sh\necho hi\n", 0o755),
      taskFile("data/input.json", '{"a":1}'),
      taskFile(long, "far"),
      taskFile("bin.dat", new Uint8Array([0, 1, 2, 255])),
    ]);
    const archive = taskFilesArchive(files);
    expect(archive.length % 512).toBe(0);
    const tarPath = join(scratch, "files.tar");
    writeFileSync(tarPath, archive);
    const listing = execFileSync("tar", ["-tvf", tarPath, "--numeric-owner"], { encoding: "utf8" });
    for (const line of listing.trim().split("\n"))
      expect(line).toMatch(/^[-d]rw[-x]r-[-x]r-[-x] 0\/0 /);
    const out = join(scratch, "out");
    execFileSync("mkdir", ["-p", out]);
    execFileSync("tar", ["-xf", tarPath, "-C", out]);
    expect(readFileSync(join(out, "run.sh"), "utf8")).toBe("#!/bin/sh\necho hi\n");
    expect(statSync(join(out, "run.sh")).mode & 0o777).toBe(0o755);
    expect(statSync(join(out, "data/input.json")).mode & 0o777).toBe(0o644);
    expect(readFileSync(join(out, long), "utf8")).toBe("far");
    expect([...readFileSync(join(out, "bin.dat"))]).toEqual([0, 1, 2, 255]);
  });
});
