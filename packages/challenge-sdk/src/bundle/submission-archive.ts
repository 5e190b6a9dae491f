/**
 * A submission's archive, declared once per challenge: where it arrives (a base64 field of the
 * JSON body, or the raw bytes of a `raw` media type), how large it may be, and the rules it is
 * read under. `router.submission({ archive })` checks it once, before the handler; the same
 * object is what the challenge's workers read the stored archive with (`readZip(bytes,
 * archive)` or `readArchive`), so an archive the service accepted is never refused later under
 * other limits.
 */
import { createHash } from "node:crypto";
// By the package's name: the /zip entry is the reader's one home in the build.
import {
  type ReadZipOptions,
  readZip,
  type ZipErrorCode,
  type ZipFileEntry,
} from "@platform/challenge-sdk/zip";
import { decodeStrictBase64 } from "./_base64.js";

/** Every way an archive can be refused: `readZip`'s codes, the base64 field's, its size. */
export type ArchiveErrorCode = ZipErrorCode | "invalid_base64" | "archive_too_large";

/**
 * A challenge's archive: one object, exported by the challenge, used by its submission route
 * and by every worker that reads what was stored. `limits`, `noun` and `checkPath` are
 * `readZip`'s own options, so the object is also a `ReadZipOptions`.
 */
export interface SubmissionArchive extends ReadZipOptions {
  /** The JSON body's field that holds the archive as base64 (none: it arrives only raw). */
  field?: string;
  /** Largest archive, in bytes, as uploaded (its base64 may be 4/3 of that). */
  maxBytes: number;
  /**
   * What a bridged upload's file name (X-Submission-Filename) must match; otherwise 400
   * `invalid_filename`. Default: any plain name (the SDK's own rule).
   */
  filename?: RegExp;
  /**
   * The challenge's own API code for a refusal, where it differs from the SDK's name: e.g.
   * `{ archive_too_large: "bundle_too_large", symlink: "bundle_symlink" }`. A `path_refused`
   * whose `checkPath` named a rule answers that rule unless mapped here.
   */
  codes?: Partial<Record<ArchiveErrorCode, string>>;
}

/** An archive that passed every check: its bytes, their sha256 and its files. */
export interface CheckedArchive {
  /** The archive as uploaded (never its base64). */
  bytes: Buffer;
  /** sha256 hex of `bytes`. */
  sha256: string;
  /** Its files in archive order, read under the archive's limits. */
  files: ZipFileEntry[];
}

/** A refusal: the status to answer (413 for sizes, else 400), the challenge's code, a message. */
export interface ArchiveError {
  status: 400 | 413;
  code: string;
  message: string;
  /** The SDK's own name of the refusal, whatever `codes` maps it to. */
  reason: ArchiveErrorCode;
}

/** `readArchive`'s answer. */
export type ArchiveResult =
  | { ok: true; value: CheckedArchive }
  | { ok: false; error: ArchiveError };

const SIZE_REFUSALS: ReadonlySet<ArchiveErrorCode> = new Set([
  "archive_too_large",
  "too_many_files",
  "unpacked_too_large",
  "file_too_large",
]);

function refusal(
  archive: SubmissionArchive,
  reason: ArchiveErrorCode,
  message: string,
  rule?: string,
): { ok: false; error: ArchiveError } {
  const code = archive.codes?.[reason] ?? rule ?? reason;
  return {
    ok: false,
    error: { status: SIZE_REFUSALS.has(reason) ? 413 : 400, code, message, reason },
  };
}

function formatSize(bytes: number): string {
  const mib = bytes / 1024 / 1024;
  return mib >= 1 ? `${Number.isInteger(mib) ? mib : mib.toFixed(1)} MiB` : `${bytes} bytes`;
}

/** The longest base64 of an archive of at most `maxBytes`. */
export function maxBase64Length(archive: Pick<SubmissionArchive, "maxBytes">): number {
  return Math.ceil(archive.maxBytes / 3) * 4;
}

/** The archive's bytes from its base64 text: size first (one comparison), then strict base64. */
export function decodeArchiveBase64(
  text: string,
  archive: SubmissionArchive,
): { ok: true; bytes: Buffer } | { ok: false; error: ArchiveError } {
  const field = archive.field ?? "archive";
  const max = maxBase64Length(archive);
  if (text.length > max) {
    return refusal(
      archive,
      "archive_too_large",
      `${field} is ${text.length} base64 characters; the limit is ${max} (${formatSize(max)})`,
    );
  }
  const decoded = decodeStrictBase64(text, field);
  return decoded.ok ? decoded : refusal(archive, "invalid_base64", decoded.message);
}

/**
 * Check an archive's bytes as its submission route does: its size, then `readZip` under the
 * archive's limits and naming rules; its sha256. Never throws on what the archive holds.
 * @example const read = await readArchive(storedZip, AGENT_ARCHIVE); // a worker, same rules
 */
export async function readArchive(
  bytes: Uint8Array,
  archive: SubmissionArchive,
): Promise<ArchiveResult> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const noun = archive.noun ?? "archive";
  if (buffer.length > archive.maxBytes) {
    return refusal(
      archive,
      "archive_too_large",
      `the ${noun} is ${buffer.length} bytes; at most ${archive.maxBytes} are accepted`,
    );
  }
  const read = await readZip(buffer, archive);
  if (!read.ok) return refusal(archive, read.error.code, read.error.message, read.error.rule);
  return {
    ok: true,
    value: {
      bytes: buffer,
      sha256: createHash("sha256").update(buffer).digest("hex"),
      files: read.value,
    },
  };
}

/** Throws a TypeError unless `archive` is usable (done when the route is declared). */
export function checkArchive(archive: SubmissionArchive): void {
  if (typeof archive !== "object" || archive === null) {
    throw new TypeError("archive must be an object: { maxBytes, field?, limits?, ... }");
  }
  if (!Number.isSafeInteger(archive.maxBytes) || archive.maxBytes < 1) {
    throw new TypeError("archive.maxBytes must be a whole number of bytes >= 1");
  }
  if (archive.field !== undefined && (typeof archive.field !== "string" || archive.field === "")) {
    throw new TypeError("archive.field must name a field of the JSON body");
  }
  if (archive.filename !== undefined && !(archive.filename instanceof RegExp)) {
    throw new TypeError("archive.filename must be a RegExp");
  }
}
