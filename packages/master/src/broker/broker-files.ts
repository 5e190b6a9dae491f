import { type BrokerFile, HttpError } from "@platform/core";
import { type UstarEntry, ustarArchive, ustarPathParts } from "./_ustar.js";

/** Caps on the files of one request. */
export interface FileCaps {
  maxCount: number;
  maxFileBytes: number;
  maxTotalBytes: number;
}

/** A validated file: its path under /workspace, decoded bytes and mode. */
export interface PlacedFile {
  path: string;
  data: Buffer;
  mode: number;
}

/** Where request files land in a workload. */
export const WORKSPACE = "/workspace";

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function invalid(index: number, message: string): HttpError {
  return new HttpError(400, "invalid_file", `files[${index}]: ${message}`, { extra: { index } });
}

function checkPath(path: string, index: number): void {
  if (path.startsWith("/"))
    throw invalid(index, "the path must be relative to /workspace, not absolute");
  if (/[\u0000-\u001f\u007f]/.test(path))
    throw invalid(index, "the path contains a NUL or control character");
  if (path.includes("\\")) throw invalid(index, 'the path contains "\\"; use "/" between segments');
  for (const segment of path.split("/")) {
    if (segment === "..") throw invalid(index, 'the path contains a ".." segment');
    if (segment === "" || segment === ".")
      throw invalid(index, 'the path has an empty or "." segment');
  }
  if (!ustarPathParts(path))
    throw invalid(index, "the path is too long (at most 100 bytes per name, 255 in all)");
}

/**
 * Check every file of a request (relative path without `..`, absolute form, NUL or control
 * characters; strict base64; per-file, total and count caps; no path both a file and a
 * directory) and decode it. Throws 400 `invalid_file` naming the first bad entry.
 */
export function validateFiles(
  files: readonly BrokerFile[] | undefined,
  caps: FileCaps,
): PlacedFile[] {
  if (!files?.length) return [];
  if (files.length > caps.maxCount) {
    throw new HttpError(
      400,
      "invalid_file",
      `At most ${caps.maxCount} files per run, got ${files.length}`,
      { extra: { index: caps.maxCount } },
    );
  }
  const placed: PlacedFile[] = [];
  const seen = new Set<string>();
  let total = 0;
  files.forEach((file, index) => {
    checkPath(file.path, index);
    if (!BASE64.test(file.content_base64))
      throw invalid(index, "content_base64 is not canonical base64");
    const data = Buffer.from(file.content_base64, "base64");
    if (data.length > caps.maxFileBytes)
      throw invalid(index, `the file is ${data.length} bytes; at most ${caps.maxFileBytes}`);
    total += data.length;
    if (total > caps.maxTotalBytes)
      throw invalid(index, `the files exceed ${caps.maxTotalBytes} bytes in all`);
    if (seen.has(file.path)) throw invalid(index, "the path appears twice");
    seen.add(file.path);
    placed.push({ path: file.path, data, mode: file.mode ?? 0o644 });
  });
  for (const [index, file] of placed.entries()) {
    const segments = file.path.split("/");
    for (let i = 1; i < segments.length; i++) {
      if (seen.has(segments.slice(0, i).join("/")))
        throw invalid(index, "a parent of this path is also a file");
    }
  }
  return placed;
}

/** The directories that must exist for `files`, parents first. */
export function parentDirectories(files: readonly PlacedFile[]): string[] {
  const dirs = new Set<string>();
  for (const file of files) {
    const segments = file.path.split("/");
    for (let i = 1; i < segments.length; i++) dirs.add(segments.slice(0, i).join("/"));
  }
  return [...dirs].sort((a, b) => a.split("/").length - b.split("/").length || a.localeCompare(b));
}

/** The tar Docker's putArchive extracts into /workspace: the files and their parent directories. */
export function filesArchive(files: readonly PlacedFile[]): Buffer {
  const entries: UstarEntry[] = parentDirectories(files).map((path) => ({
    path,
    type: "directory",
    mode: 0o755,
  }));
  for (const file of files)
    entries.push({ path: file.path, type: "file", mode: file.mode, data: file.data });
  return ustarArchive(entries);
}
