import { crc32, inflateRawSync } from "node:zlib";
import yauzl from "yauzl";
import { type BundleResult, refuse } from "./bundle-error.js";
import { bundlePathProblem } from "./bundle-path.js";

/** One file of a bundle: its path inside the bundle, its bytes and their UTF-8 text. */
export interface BundleFile {
  path: string;
  data: Buffer;
  text: string;
}

/** The caps a ZIP is read under. */
export interface ZipLimits {
  /** Most files (directory entries aside). */
  maxFiles: number;
  /** Most bytes once unpacked, all files together. */
  maxUnpackedBytes: number;
}

/** 200 files, 2 MiB unpacked. */
export const ZIP_LIMITS: Readonly<ZipLimits> = Object.freeze({
  maxFiles: 200,
  maxUnpackedBytes: 2 * 1024 * 1024,
});

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

/**
 * Read a bundle ZIP held in memory, refusing (never throwing) on the first problem: more than
 * `maxFiles` files or `maxUnpackedBytes` unpacked, a symlink or other special file, an absolute,
 * escaping or non-plain name, a disallowed extension, a duplicate (also by case), a path that is
 * both a file and a directory, an encrypted or unsupported entry, bytes that are not UTF-8.
 *
 * Zip-bomb safe: the central directory is checked first (declared sizes included) before a
 * single byte is inflated, and each entry is inflated with its declared size as a hard output
 * cap, so no entry can unpack past the limit whatever its header claims.
 */
export async function readZip(
  zip: Buffer,
  limits: ZipLimits = ZIP_LIMITS,
): Promise<BundleResult<BundleFile[]>> {
  let zipfile: yauzl.ZipFile;
  try {
    // decodeStrings off: names stay raw bytes, checked here with messages that name them.
    zipfile = await yauzl.fromBufferPromise(zip, { decodeStrings: false, lazyEntries: true });
  } catch (error) {
    return refuse("invalid_zip", `code is not a readable ZIP archive: ${(error as Error).message}`);
  }
  try {
    const listed = await listEntries(zipfile, limits);
    if (!listed.ok) return listed;
    const files: BundleFile[] = [];
    for (const { path, entry } of listed.value) {
      const file = await extract(zip, zipfile, path, entry);
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
  limits: ZipLimits,
): Promise<BundleResult<Listed[]>> {
  // Directory entries are free but not unbounded: the count of all entries is checked before
  // reading any, so a directory of a million names costs nothing.
  if (zipfile.entryCount > limits.maxFiles * 2) {
    return refuse(
      "too_many_files",
      `bundle lists ${zipfile.entryCount} entries; at most ${limits.maxFiles} files are allowed`,
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
    return refuse("invalid_zip", `code is not a readable ZIP archive: ${(error as Error).message}`);
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
        "bundle_invalid_path",
        `bundle holds a name that is not UTF-8: ${JSON.stringify(raw.toString("latin1"))}`,
      );
    }
    const mode = (entry.externalFileAttributes >>> 16) & S_IFMT;
    const isDirectory = name.endsWith("/");
    const path = isDirectory ? name.slice(0, -1) : name;

    const problem = bundlePathProblem(path, !isDirectory);
    if (problem) {
      const code =
        problem.rule === "extension" ? "bundle_forbidden_extension" : "bundle_invalid_path";
      // A link gets named as a link even when its name would also fail: it is the worse finding.
      if (mode !== S_IFLNK) return refuse(code, problem.message);
    }
    if (mode === S_IFLNK) return refuse("bundle_symlink", `bundle holds a symlink: ${path}`);
    if (mode !== 0 && mode !== S_IFREG && mode !== S_IFDIR) {
      return refuse(
        "bundle_special_file",
        `bundle holds a special file (not a regular file or directory): ${path}`,
      );
    }
    if (entry.isEncrypted()) {
      return refuse("bundle_unreadable_entry", `bundle holds an encrypted entry: ${path}`);
    }

    if (isDirectory) {
      if (entry.uncompressedSize !== 0 || mode === S_IFREG) {
        return refuse(
          "bundle_directory_conflict",
          `bundle holds a directory entry that is a file: ${name}`,
        );
      }
      directories.add(path);
      continue;
    }
    if (mode === S_IFDIR || (entry.externalFileAttributes & DOS_DIRECTORY) !== 0) {
      return refuse(
        "bundle_directory_conflict",
        `bundle holds a directory stored as a file: ${path}`,
      );
    }
    if (entry.compressionMethod !== STORED && entry.compressionMethod !== DEFLATED) {
      return refuse(
        "bundle_unreadable_entry",
        `bundle holds ${path} compressed with method ${entry.compressionMethod}; use deflate or store`,
      );
    }
    const twin = lowerCased.get(path.toLowerCase());
    if (twin === path) return refuse("bundle_duplicate_path", `bundle holds ${path} twice`);
    if (twin !== undefined) {
      return refuse(
        "bundle_duplicate_path",
        `bundle holds two paths that differ only in case: ${twin} and ${path}`,
      );
    }
    lowerCased.set(path.toLowerCase(), path);

    if (files.length === limits.maxFiles) {
      return refuse(
        "too_many_files",
        `bundle holds more than ${limits.maxFiles} files (stopped at ${path})`,
      );
    }
    unpacked += entry.uncompressedSize;
    if (unpacked > limits.maxUnpackedBytes) {
      return refuse(
        "unpacked_too_large",
        `bundle unpacks to more than ${formatBytes(limits.maxUnpackedBytes)} (stopped at ${path})`,
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
      return refuse(
        "bundle_directory_conflict",
        `bundle uses ${path} both as a file and as a directory`,
      );
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
): Promise<BundleResult<BundleFile>> {
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
          ? `bundle holds ${path}, which inflates past its declared ${declared} bytes`
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
  let text: string;
  try {
    text = utf8.decode(data);
  } catch {
    return refuse("bundle_not_text", `bundle holds ${path}, which is not UTF-8 text`);
  }
  if (text.includes("\u0000")) {
    return refuse("bundle_not_text", `bundle holds ${path}, which contains NUL bytes`);
  }
  return { ok: true, value: { path, data, text } };
}

function formatBytes(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / 1024 / 1024} MiB` : `${bytes} bytes`;
}
