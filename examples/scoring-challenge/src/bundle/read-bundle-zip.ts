/**
 * The bundle's reading of a ZIP: the SDK's `readArchive` under BUNDLE_ARCHIVE (limits, safe
 * paths, zip bombs, the bundle's path rules and codes), plus what only a bundle requires: files
 * that are all UTF-8 text. Refusals keep the bundle's API codes (`bundle_*`).
 */
import { type CheckedArchive, readArchive } from "@platform/challenge-sdk";
import { BUNDLE_ARCHIVE } from "./bundle-archive.js";
import { type BundleErrorCode, type BundleResult, refuse } from "./bundle-error.js";

/** One file of a bundle: its path inside the bundle, its bytes and their UTF-8 text. */
export interface BundleFile {
  path: string;
  data: Buffer;
  text: string;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Every structural rule of a bundle ZIP; the files in archive order, with their text. */
export async function readBundleZip(zip: Buffer): Promise<BundleResult<BundleFile[]>> {
  const read = await readArchive(zip, BUNDLE_ARCHIVE);
  // BUNDLE_ARCHIVE maps every code the SDK answers to one of the bundle's own.
  if (!read.ok) return refuse(read.error.code as BundleErrorCode, read.error.message);
  return bundleText(read.value);
}

/** The files of an archive the SDK already read, each as UTF-8 text, or `bundle_not_text`. */
export function bundleText(archive: CheckedArchive): BundleResult<BundleFile[]> {
  const files: BundleFile[] = [];
  for (const { path, data } of archive.files) {
    let text: string;
    try {
      text = utf8.decode(data);
    } catch {
      return refuse("bundle_not_text", `bundle holds ${path}, which is not UTF-8 text`);
    }
    if (text.includes("\u0000")) {
      return refuse("bundle_not_text", `bundle holds ${path}, which contains NUL bytes`);
    }
    files.push({ path, data, text });
  }
  return { ok: true, value: files };
}
