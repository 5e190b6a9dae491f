/**
 * The bundle's reading of a ZIP: the SDK's safe `readZip` (limits, safe paths, zip bombs), plus
 * what only a bundle requires: plain ASCII names with an allowed extension (bundle-path.ts) and
 * files that are all UTF-8 text. Refusals keep the bundle's API codes (`bundle_*`).
 */
import { readZip, ZIP_LIMITS, type ZipErrorCode, type ZipLimits } from "@platform/challenge-sdk";
import { type BundleErrorCode, type BundleResult, refuse } from "./bundle-error.js";
import { bundlePathProblem, type PathProblem } from "./bundle-path.js";

/** One file of a bundle: its path inside the bundle, its bytes and their UTF-8 text. */
export interface BundleFile {
  path: string;
  data: Buffer;
  text: string;
}

// The SDK's neutral codes, as the bundle's API has always named them (path_refused is decided
// by which rule of bundle-path.ts refused the name).
const BUNDLE_CODES: Record<Exclude<ZipErrorCode, "path_refused">, BundleErrorCode> = {
  invalid_zip: "invalid_zip",
  too_many_files: "too_many_files",
  unpacked_too_large: "unpacked_too_large",
  symlink: "bundle_symlink",
  special_file: "bundle_special_file",
  invalid_path: "bundle_invalid_path",
  duplicate_path: "bundle_duplicate_path",
  directory_conflict: "bundle_directory_conflict",
  unreadable_entry: "bundle_unreadable_entry",
};

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Every structural rule of a bundle ZIP; the files in archive order, with their text. */
export async function readBundleZip(
  zip: Buffer,
  limits: ZipLimits = ZIP_LIMITS,
): Promise<BundleResult<BundleFile[]>> {
  let refusedBy: PathProblem | null = null;
  const read = await readZip(zip, {
    limits,
    noun: "bundle",
    checkPath: (path, isFile) => {
      refusedBy = bundlePathProblem(path, isFile);
      return refusedBy?.message ?? null;
    },
  });
  if (!read.ok) {
    const { code, message } = read.error;
    if (code !== "path_refused") return refuse(BUNDLE_CODES[code], message);
    const rule = (refusedBy as PathProblem | null)?.rule;
    return refuse(
      rule === "extension" ? "bundle_forbidden_extension" : "bundle_invalid_path",
      message,
    );
  }
  const files: BundleFile[] = [];
  for (const { path, data } of read.value) {
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
