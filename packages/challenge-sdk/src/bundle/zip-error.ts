/**
 * Why a ZIP was refused: a stable `code` a caller can branch on (and map to its own API codes),
 * and a `message` that names what was found (the path, the limit). `readZip` answers with these
 * instead of throwing, so a hostile archive is an ordinary result, never a crash.
 */

/** Every code `readZip` can refuse with. */
export type ZipErrorCode =
  /** Not a ZIP, a damaged directory or entry, a CRC or size that does not match. */
  | "invalid_zip"
  /** More files than `ZipLimits.maxFiles`. */
  | "too_many_files"
  /** More bytes unpacked than `ZipLimits.maxUnpackedBytes`, or an entry inflating past its size. */
  | "unpacked_too_large"
  /** One file larger than `ZipLimits.maxFileBytes`. */
  | "file_too_large"
  /** A symbolic link. */
  | "symlink"
  /** A device, fifo or socket: not a regular file or directory. */
  | "special_file"
  /** A name that is absolute, escapes the archive, is not UTF-8 or not a plain relative path. */
  | "invalid_path"
  /** A name the caller's `checkPath` refused. */
  | "path_refused"
  /** The same path twice, also when the two differ only in case. */
  | "duplicate_path"
  /** A path both a file and a directory, or a directory entry that is a file. */
  | "directory_conflict"
  /** An encrypted entry, or a compression method other than store and deflate. */
  | "unreadable_entry";

export interface ZipError {
  code: ZipErrorCode;
  message: string;
  /** On `path_refused`: the rule the caller's `checkPath` named, when it named one. */
  rule?: string;
}

/** `readZip`'s answer: the files, or the first problem found. */
export type ZipResult<T> = { ok: true; value: T } | { ok: false; error: ZipError };

/** A refusal with `code` and `message`. */
export function zipRefusal<T = never>(
  code: ZipErrorCode,
  message: string,
  rule?: string,
): ZipResult<T> {
  return { ok: false, error: rule === undefined ? { code, message } : { code, message, rule } };
}
