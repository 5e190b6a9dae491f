import { type CheckedArchive, readArchive } from "@platform/challenge-sdk";
import { BUNDLE_ARCHIVE } from "./bundle-archive.js";
import { type BundleErrorCode, type BundleResult, refuse } from "./bundle-error.js";
import { type BundleFile, bundleText } from "./read-bundle-zip.js";

/** The two scripts every bundle must hold (the harness imports them by these names). */
export const REQUIRED_FILES: readonly string[] = ["architecture.py", "training.py"];

/** A bundle that passed every structural check. */
export interface Bundle {
  /** sha256 hex of the ZIP bytes (not of their base64, which has many spellings). */
  codeHash: string;
  /** The ZIP as received, to store and to re-read later. */
  zip: Buffer;
  /** Its files in archive order. */
  files: BundleFile[];
  /** Bytes once unpacked, all files together. */
  unpackedBytes: number;
}

/**
 * Check a bundle ZIP: every rule of BUNDLE_ARCHIVE (what the submit route already checked), then
 * {@link bundleFromArchive}. The pipeline re-reads stored bundles with it.
 */
export async function openBundle(zip: Buffer): Promise<BundleResult<Bundle>> {
  const read = await readArchive(zip, BUNDLE_ARCHIVE);
  // BUNDLE_ARCHIVE maps every code the SDK answers to one of the bundle's own.
  if (!read.ok) return refuse(read.error.code as BundleErrorCode, read.error.message);
  return bundleFromArchive(read.value);
}

/**
 * A bundle from an archive the SDK read under BUNDLE_ARCHIVE: its files as UTF-8 text, then the
 * contract's files at its root. Whether those files define `build_model(ctx)` and `train(ctx)`
 * is judged by the harness's gate over a real parse tree, not here.
 */
export function bundleFromArchive(archive: CheckedArchive): BundleResult<Bundle> {
  const read = bundleText(archive);
  if (!read.ok) return read;
  const files = read.value;
  const paths = new Set(files.map((file) => file.path));
  const missing = REQUIRED_FILES.filter((path) => !paths.has(path));
  if (missing.length > 0) {
    const nested = files.find((file) =>
      REQUIRED_FILES.some((name) => file.path.endsWith(`/${name}`)),
    );
    return refuse(
      "contract_missing_file",
      `bundle has no ${missing.join(" and no ")} at its root` +
        (nested ? ` (found ${nested.path}: zip the files, not their folder)` : ""),
    );
  }
  return {
    ok: true,
    value: {
      codeHash: archive.sha256,
      zip: archive.bytes,
      files,
      unpackedBytes: files.reduce((sum, file) => sum + file.data.length, 0),
    },
  };
}
