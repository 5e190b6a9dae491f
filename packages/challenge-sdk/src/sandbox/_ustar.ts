/** One member of a ustar archive: a regular file or a directory, owned by root. */
export interface UstarEntry {
  /** Relative path with "/" separators, no trailing slash. */
  path: string;
  type: "file" | "directory";
  mode: number;
  data?: Uint8Array;
}

const BLOCK = 512;
const encoder = new TextEncoder();

/**
 * Splits a path into ustar's `prefix` (<= 155 bytes) and `name` (<= 100 bytes) at a "/", or
 * null when it cannot be encoded (callers refuse such a path before building anything).
 */
export function ustarPathParts(path: string): { prefix: Uint8Array; name: Uint8Array } | null {
  const bytes = encoder.encode(path);
  if (bytes.length <= 100) return { prefix: new Uint8Array(0), name: bytes };
  for (let i = bytes.length - 1; i > 0; i--) {
    if (bytes[i] !== 0x2f) continue;
    const name = bytes.subarray(i + 1);
    if (name.length > 100) return null;
    const prefix = bytes.subarray(0, i);
    if (prefix.length <= 155 && name.length > 0) return { prefix, name };
  }
  return null;
}

function octal(value: number, width: number): string {
  // width - 1 digits and a NUL: the POSIX form every tar reader accepts.
  return `${value.toString(8).padStart(width - 1, "0")}\0`;
}

function header(entry: UstarEntry, size: number, mtime: number): Uint8Array {
  const parts = ustarPathParts(entry.type === "directory" ? `${entry.path}/` : entry.path);
  if (!parts) throw new Error(`path too long for ustar: ${entry.path}`);
  const block = new Uint8Array(BLOCK);
  const put = (offset: number, value: string | Uint8Array) =>
    block.set(typeof value === "string" ? encoder.encode(value) : value, offset);
  put(0, parts.name);
  put(100, octal(entry.mode & 0o777, 8));
  put(108, octal(0, 8));
  put(116, octal(0, 8));
  put(124, octal(size, 12));
  put(136, octal(mtime, 12));
  put(148, "        ");
  put(156, entry.type === "directory" ? "5" : "0");
  put(257, "ustar\u000000");
  put(265, "root");
  put(297, "root");
  put(345, parts.prefix);
  let sum = 0;
  for (const byte of block) sum += byte;
  put(148, `${sum.toString(8).padStart(6, "0")}\0 `);
  return block;
}

/**
 * An uncompressed ustar archive in memory (what Docker's putArchive takes). Only files and
 * directories owned by root, permission bits only: never links, devices, set-id bits or owners.
 */
export function ustarArchive(entries: readonly UstarEntry[], mtime = 0): Buffer {
  const chunks: Uint8Array[] = [];
  for (const entry of entries) {
    const data = entry.type === "file" ? (entry.data ?? new Uint8Array(0)) : new Uint8Array(0);
    chunks.push(header(entry, data.length, mtime));
    if (data.length) {
      chunks.push(data);
      const padding = (BLOCK - (data.length % BLOCK)) % BLOCK;
      if (padding) chunks.push(new Uint8Array(padding));
    }
  }
  chunks.push(new Uint8Array(BLOCK * 2));
  return Buffer.concat(chunks);
}
