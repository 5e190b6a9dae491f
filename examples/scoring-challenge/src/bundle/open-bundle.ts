import { createHash } from "node:crypto";
import { ZIP_LIMITS, type ZipLimits } from "@platform/challenge-sdk";
import { type BundleResult, refuse } from "./bundle-error.js";
import { decodeBase64Bundle } from "./decode-base64.js";
import { type BundleFile, readBundleZip } from "./read-bundle-zip.js";

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
 * Check a bundle ZIP: every structural rule of {@link readBundleZip}, then the contract's files at the
 * bundle's root. Whether those files define `build_model(ctx)` and `train(ctx)` is judged by the
 * harness's gate over a real parse tree, not here.
 */
export async function openBundle(
  zip: Buffer,
  limits: ZipLimits = ZIP_LIMITS,
): Promise<BundleResult<Bundle>> {
  const read = await readBundleZip(zip, limits);
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
      codeHash: createHash("sha256").update(zip).digest("hex"),
      zip,
      files,
      unpackedBytes: files.reduce((sum, file) => sum + file.data.length, 0),
    },
  };
}

/** {@link decodeBase64Bundle} then {@link openBundle}: the submit route's whole bundle check. */
export async function openBase64Bundle(
  code: string,
  limits: ZipLimits & { maxBase64Chars?: number } = ZIP_LIMITS,
): Promise<BundleResult<Bundle>> {
  const decoded = decodeBase64Bundle(code, limits.maxBase64Chars);
  if (!decoded.ok) return decoded;
  return openBundle(decoded.value, limits);
}
