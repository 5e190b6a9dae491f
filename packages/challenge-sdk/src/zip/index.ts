/**
 * @platform/challenge-sdk/zip: reading and writing ZIP archives safely. `readZip` reads one held
 * in memory under limits (files, total and per-file bytes, compression ratio, paths), refusing
 * hostile entries with a coded `ZipError` instead of throwing; `zipFiles` writes one (a miner's
 * tool packing an upload). A submission route that takes a ZIP declares its `archive` instead
 * (`SubmissionArchive` in the main entry), which reads it with these under one set of limits.
 */
export {
  type ReadZipOptions,
  readZip,
  ZIP_LIMITS,
  type ZipFileEntry,
  type ZipLimits,
} from "../bundle/read-zip.js";
export { type ZipFileInput, zipFiles } from "../bundle/write-zip.js";
export type { ZipError, ZipErrorCode, ZipResult } from "../bundle/zip-error.js";
