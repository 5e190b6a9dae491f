/**
 * A safe reader for a ZIP held in memory (a miner's upload, a stored artifact): every entry
 * checked from the central directory before a byte is inflated, every inflate capped by the size
 * the entry declares, every refusal a result with a stable code instead of an exception.
 */
import { crc32, inflateRawSync } from "node:zlib";
import yauzl from "yauzl";
import { zipRefusal as refuse, type ZipResult } from "./zip-error.js";
import { unsafeZipPath } from "./zip-path.js";

/** One file of a ZIP: its path inside the archive and its bytes. */
export interface ZipFileEntry {
  path: string;
  data: Buffer;
}

/** The caps a ZIP is read under. */
export interface ZipLimits {
  /** Most files (directory entries aside). */
  maxFiles: number;
  /** Most bytes once unpacked, all files together. */
  maxUnpackedBytes: number;
  /** Most bytes of any one file once unpacked (default: no cap but `maxUnpackedBytes`). */
  maxFileBytes?: number | undefined;
}

/** 200 files, 2 MiB unpacked. */
export const ZIP_LIMITS: Readonly<ZipLimits> = Object.freeze({
  maxFiles: 200,
  maxUnpackedBytes: 2 * 1024 * 1024,
});

export interface ReadZipOptions {
  /** Default {@link ZIP_LIMITS}. */
  limits?: ZipLimits;
  /** How messages name the archive ("bundle", "agent ZIP"); default "archive". */
  noun?: string;
  /**
   * The caller's own naming rules, on top of the safe-path rules: a message refuses the entry
   * (code `path_refused`), null accepts it; `{ rule, message }` also says which rule refused it
   * (the error's `rule`, e.g. to answer its own API code). `isFile` is false for a directory
   * entry (its path without the trailing "/").
   */
  checkPath?: PathCheck | undefined;
}

/** A caller's naming rule of {@link ReadZipOptions.checkPath}: null accepts the path. */
export type PathCheck = (
  path: string,
  isFile: boolean,
) => string | { rule: string; message: string } | null;

// Unix file types in the high half of the external attributes (any host may set them).
const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;
const DOS_DIRECTORY = 0x10;

const STORED = 0;
const DEFLATED = 8;

const utf8 = new TextDecoder("utf-8", { fatal: true });

interface Listed {
  path: string;
  entry: yauzl.Entry;
}

interface ReadSettings {
  limits: ZipLimits;
  noun: string;
  checkPath: PathCheck | undefined;
}

/**
 * Read a ZIP held in memory, refusing (never throwing) on the first problem: more than
 * `maxFiles` files, `maxUnpackedBytes` unpacked or `maxFileBytes` in one file, a symlink or other special file, an absolute,
 * escaping or non-plain name, a name `checkPath` refuses, a duplicate (also by case), a path that
 * is both a file and a directory, an encrypted or unsupported entry, a size or CRC that lies.
 * The bytes are returned as they are: whether they must be text is the caller's rule.
 *
 * Zip-bomb safe: the central directory is checked first (declared sizes included) before a
 * single byte is inflated, and each entry is inflated with its declared size as a hard output
 * cap, so no entry can unpack past the limit whatever its header claims.
 */
export async function readZip(
  zip: Buffer,
  options: ReadZipOptions = {},
): Promise<ZipResult<ZipFileEntry[]>> {
  const settings: ReadSettings = {
    limits: options.limits ?? ZIP_LIMITS,
    noun: options.noun ?? "archive",
    checkPath: options.checkPath,
  };
  let zipfile: yauzl.ZipFile;
  try {
    // decodeStrings off: names stay raw bytes, checked here with messages that name them.
    zipfile = await yauzl.fromBufferPromise(zip, { decodeStrings: false, lazyEntries: true });
  } catch (error) {
    return refuse("invalid_zip", `not a readable ZIP archive: ${(error as Error).message}`);
  }
  try {
    const listed = await listEntries(zipfile, settings);
    if (!listed.ok) return listed;
    const files: ZipFileEntry[] = [];
    for (const { path, entry } of listed.value) {
      const file = await extract(zip, zipfile, path, entry, settings.noun);
      if (!file.ok) return file;
      files.push(file.value);
    }
    return { ok: true, value: files };
  } finally {
    zipfile.close();
  }
}

/** Pass 1, metadata only: every rule that can be judged from the central directory. */
async function listEntries(
  zipfile: yauzl.ZipFile,
  { limits, noun, checkPath }: ReadSettings,
): Promise<ZipResult<Listed[]>> {
  // Directory entries are free but not unbounded: the count of all entries is checked before
  // reading any, so a directory of a million names costs nothing.
  if (zipfile.entryCount > limits.maxFiles * 2) {
    return refuse(
      "too_many_files",
      `${noun} lists ${zipfile.entryCount} entries; at most ${limits.maxFiles} files are allowed`,
    );
  }
  const files: Listed[] = [];
  const directories = new Set<string>();
  const lowerCased = new Map<string, string>();
  let unpacked = 0;
  let entries: AsyncIterableIterator<yauzl.Entry>;
  try {
    entries = zipfile.eachEntry();
  } catch (error) {
    return refuse("invalid_zip", `not a readable ZIP archive: ${(error as Error).message}`);
  }
  while (true) {
    let next: IteratorResult<yauzl.Entry>;
    try {
      next = await entries.next();
    } catch (error) {
      return refuse("invalid_zip", `the ZIP's directory is damaged: ${(error as Error).message}`);
    }
    if (next.done) break;
    const entry = next.value;
    const raw = entry.fileNameRaw;
    let name: string;
    try {
      name = utf8.decode(raw);
    } catch {
      return refuse(
        "invalid_path",
        `${noun} holds a name that is not UTF-8: ${JSON.stringify(raw.toString("latin1"))}`,
      );
    }
    const mode = (entry.externalFileAttributes >>> 16) & S_IFMT;
    const isDirectory = name.endsWith("/");
    const path = isDirectory ? name.slice(0, -1) : name;

    const unsafe = unsafeZipPath(path, noun);
    const refused = unsafe === null ? (checkPath?.(path, !isDirectory) ?? null) : null;
    // A link gets named as a link even when its name would also fail: it is the worse finding.
    if (mode !== S_IFLNK) {
      if (unsafe !== null) return refuse("invalid_path", unsafe);
      if (typeof refused === "string") return refuse("path_refused", refused);
      if (refused !== null) return refuse("path_refused", refused.message, refused.rule);
    }
    if (mode === S_IFLNK) return refuse("symlink", `${noun} holds a symlink: ${path}`);
    if (mode !== 0 && mode !== S_IFREG && mode !== S_IFDIR) {
      return refuse(
        "special_file",
        `${noun} holds a special file (not a regular file or directory): ${path}`,
      );
    }
    if (entry.isEncrypted()) {
      return refuse("unreadable_entry", `${noun} holds an encrypted entry: ${path}`);
    }

    if (isDirectory) {
      if (entry.uncompressedSize !== 0 || mode === S_IFREG) {
        return refuse(
          "directory_conflict",
          `${noun} holds a directory entry that is a file: ${name}`,
        );
      }
      directories.add(path);
      continue;
    }
    if (mode === S_IFDIR || (entry.externalFileAttributes & DOS_DIRECTORY) !== 0) {
      return refuse("directory_conflict", `${noun} holds a directory stored as a file: ${path}`);
    }
    if (entry.compressionMethod !== STORED && entry.compressionMethod !== DEFLATED) {
      return refuse(
        "unreadable_entry",
        `${noun} holds ${path} compressed with method ${entry.compressionMethod}; use deflate or store`,
      );
    }
    const twin = lowerCased.get(path.toLowerCase());
    if (twin === path) return refuse("duplicate_path", `${noun} holds ${path} twice`);
    if (twin !== undefined) {
      return refuse(
        "duplicate_path",
        `${noun} holds two paths that differ only in case: ${twin} and ${path}`,
      );
    }
    lowerCased.set(path.toLowerCase(), path);

    if (files.length === limits.maxFiles) {
      return refuse(
        "too_many_files",
        `${noun} holds more than ${limits.maxFiles} files (stopped at ${path})`,
      );
    }
    if (limits.maxFileBytes !== undefined && entry.uncompressedSize > limits.maxFileBytes) {
      return refuse(
        "file_too_large",
        `${noun} holds ${path}, which unpacks to more than ${formatBytes(limits.maxFileBytes)}`,
      );
    }
    unpacked += entry.uncompressedSize;
    if (unpacked > limits.maxUnpackedBytes) {
      return refuse(
        "unpacked_too_large",
        `${noun} unpacks to more than ${formatBytes(limits.maxUnpackedBytes)} (stopped at ${path})`,
      );
    }
    files.push({ path, entry });
  }

  // A name used both as a file and as a directory (x.py and x.py/y.py) extracts two ways.
  const filePaths = new Set(files.map((file) => file.path));
  for (const { path } of files) {
    const parts = path.split("/");
    for (let depth = 1; depth < parts.length; depth++)
      directories.add(parts.slice(0, depth).join("/"));
  }
  for (const path of directories) {
    if (filePaths.has(path)) {
      return refuse("directory_conflict", `${noun} uses ${path} both as a file and as a directory`);
    }
  }
  return { ok: true, value: files };
}

/** Pass 2: one entry's bytes, inflated under its declared size, checked against its CRC. */
async function extract(
  zip: Buffer,
  zipfile: yauzl.ZipFile,
  path: string,
  entry: yauzl.Entry,
  noun: string,
): Promise<ZipResult<ZipFileEntry>> {
  let start: number;
  try {
    ({ fileDataStart: start } = await zipfile.readLocalFileHeaderPromise(entry, { minimal: true }));
  } catch (error) {
    return refuse("invalid_zip", `${path}: damaged entry header (${(error as Error).message})`);
  }
  const end = start + entry.compressedSize;
  if (end > zip.length) return refuse("invalid_zip", `${path}: the ZIP is cut short`);
  const packed = zip.subarray(start, end);
  const declared = entry.uncompressedSize;

  let data: Buffer;
  if (entry.compressionMethod === STORED) {
    data = Buffer.from(packed);
  } else {
    try {
      // maxOutputLength makes zlib stop (RangeError) the moment output passes the declared size.
      data = inflateRawSync(packed, { maxOutputLength: Math.max(declared, 1) });
    } catch (error) {
      const bomb = (error as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE";
      return refuse(
        bomb ? "unpacked_too_large" : "invalid_zip",
        bomb
          ? `${noun} holds ${path}, which inflates past its declared ${declared} bytes`
          : `${path}: damaged compressed data (${(error as Error).message})`,
      );
    }
  }
  if (data.length !== declared) {
    return refuse(
      "invalid_zip",
      `${path}: holds ${data.length} bytes where the ZIP declares ${declared}`,
    );
  }
  if (crc32(data) !== entry.crc32) return refuse("invalid_zip", `${path}: CRC mismatch`);
  return { ok: true, value: { path, data } };
}

function formatBytes(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / 1024 / 1024} MiB` : `${bytes} bytes`;
}
