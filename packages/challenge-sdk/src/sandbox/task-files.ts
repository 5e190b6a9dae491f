import type { BrokerFile } from "@platform/core";
import { type UstarEntry, ustarArchive, ustarPathParts } from "./_ustar.js";
import { SandboxRefusal } from "./sandbox-refusal.js";

/** Caps on the files of one task. */
export interface TaskFileCaps {
  maxCount: number;
  maxFileBytes: number;
  maxTotalBytes: number;
}

/** 256 files, 8 MiB each, 16 MiB in all (the broker's defaults). */
export const DEFAULT_FILE_CAPS: Readonly<TaskFileCaps> = Object.freeze({
  maxCount: 256,
  maxFileBytes: 8 * 1024 * 1024,
  maxTotalBytes: 16 * 1024 * 1024,
});

/** A checked file: its path under /workspace, decoded bytes and mode. */
export interface PlacedFile {
  path: string;
  data: Buffer;
  mode: number;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function invalid(index: number, message: string): SandboxRefusal {
  return new SandboxRefusal("invalid_file", `files[${index}]: ${message}`, { index });
}

/** Why `path` cannot name a file under /workspace, or null when it can. */
export function taskFilePathProblem(path: string): string | null {
  if (typeof path !== "string" || path === "") return "the path is empty";
  if (path.startsWith("/")) return "the path must be relative to /workspace, not absolute";
  if (/[\u0000-\u001f\u007f]/.test(path)) return "the path contains a NUL or control character";
  if (path.includes("\\")) return 'the path contains "\\"; use "/" between segments';
  for (const segment of path.split("/")) {
    if (segment === "..") return 'the path contains a ".." segment';
    if (segment === "" || segment === ".") return 'the path has an empty or "." segment';
  }
  if (!ustarPathParts(path)) return "the path is too long (at most 100 bytes per name, 255 in all)";
  // The archive also holds each parent directory, as "dir/": check those entries as the tar
  // writer will encode them, so a 100-byte directory name is refused here, not by the writer.
  const segments = path.split("/");
  for (let i = 1; i < segments.length; i++) {
    if (!ustarPathParts(`${segments.slice(0, i).join("/")}/`))
      return "a directory in the path is too long (at most 99 bytes per directory name, 254 in all)";
  }
  return null;
}

/**
 * Checks every file of a task (core's `BrokerFile`: a relative path without `..`, not absolute, no NUL or control
 * characters; canonical base64; per-file, total and count caps; no path both a file and a
 * parent directory) and decodes it. Throws `invalid_file` naming the first bad entry. With
 * `caps` null only the paths and encoding are checked (the broker applies its own caps).
 */
export function checkTaskFiles(
  files: readonly BrokerFile[] | undefined,
  caps: TaskFileCaps | null = DEFAULT_FILE_CAPS,
): PlacedFile[] {
  if (!files?.length) return [];
  if (caps && files.length > caps.maxCount) {
    // The index named is the first file past the cap.
    throw new SandboxRefusal(
      "invalid_file",
      `At most ${caps.maxCount} files per task, got ${files.length}`,
      { index: caps.maxCount },
    );
  }
  const placed: PlacedFile[] = [];
  const seen = new Set<string>();
  let total = 0;
  files.forEach((file, index) => {
    const problem = taskFilePathProblem(file.path);
    if (problem) throw invalid(index, problem);
    if (!BASE64.test(file.content_base64))
      throw invalid(index, "content_base64 is not canonical base64");
    const data = Buffer.from(file.content_base64, "base64");
    if (caps && data.length > caps.maxFileBytes) {
      throw invalid(index, `the file is ${data.length} bytes; at most ${caps.maxFileBytes}`);
    }
    total += data.length;
    if (caps && total > caps.maxTotalBytes)
      throw invalid(index, `the files exceed ${caps.maxTotalBytes} bytes in all`);
    if (seen.has(file.path)) throw invalid(index, "the path appears twice");
    // setuid, setgid and sticky bits would weaken the sandbox: the same answer as any weakening.
    if (
      file.mode !== undefined &&
      (!Number.isInteger(file.mode) || file.mode < 0 || file.mode > 0o777)
    ) {
      throw new SandboxRefusal(
        "weakening_refused",
        `files[${index}].mode: at most 0o777 (no setuid, setgid or sticky bit); the sandbox is never weakened`,
        { index, field: "mode" },
      );
    }
    seen.add(file.path);
    placed.push({ path: file.path, data, mode: file.mode ?? 0o644 });
  });
  placed.forEach((file, index) => {
    const segments = file.path.split("/");
    for (let i = 1; i < segments.length; i++) {
      if (seen.has(segments.slice(0, i).join("/")))
        throw invalid(index, "a parent of this path is also a file");
    }
  });
  return placed;
}

/** The tar that putArchive extracts into /workspace: the files and their parent directories. */
export function taskFilesArchive(files: readonly PlacedFile[]): Buffer {
  const dirs = new Set<string>();
  for (const file of files) {
    const segments = file.path.split("/");
    for (let i = 1; i < segments.length; i++) dirs.add(segments.slice(0, i).join("/"));
  }
  // Parents before children, so every extractor creates them in order.
  const sorted = [...dirs].sort(
    (a, b) => a.split("/").length - b.split("/").length || a.localeCompare(b),
  );
  const entries: UstarEntry[] = sorted.map((path) => ({ path, type: "directory", mode: 0o755 }));
  for (const file of files)
    entries.push({ path: file.path, type: "file", mode: file.mode, data: file.data });
  return ustarArchive(entries);
}
