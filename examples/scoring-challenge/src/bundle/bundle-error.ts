/**
 * Why a bundle was refused: a stable `code` for clients and tests, a `message` that names what
 * was found (the path, the limit), and the HTTP status to answer with when the refusal happens
 * at submit time. Bundle checks return these instead of throwing: only the HTTP edge throws.
 */
export interface BundleError {
  code: BundleErrorCode;
  message: string;
  status: 400 | 413;
}

/** Every code a bundle check can answer with. */
export type BundleErrorCode =
  | "invalid_base64"
  | "bundle_too_large"
  | "invalid_zip"
  | "too_many_files"
  | "unpacked_too_large"
  | "bundle_symlink"
  | "bundle_special_file"
  | "bundle_invalid_path"
  | "bundle_forbidden_extension"
  | "bundle_duplicate_path"
  | "bundle_directory_conflict"
  | "bundle_unreadable_entry"
  | "bundle_not_text"
  | "contract_missing_file";

/** A check's answer: the value, or the first problem found. */
export type BundleResult<T> = { ok: true; value: T } | { ok: false; error: BundleError };

// Size refusals are 413 (the client should send less); everything else is a 400 the miner fixes.
const TOO_LARGE: ReadonlySet<BundleErrorCode> = new Set([
  "bundle_too_large",
  "too_many_files",
  "unpacked_too_large",
]);

/** A failed result with `code` and `message` (status chosen by the code). */
export function refuse<T = never>(code: BundleErrorCode, message: string): BundleResult<T> {
  return { ok: false, error: { code, message, status: TOO_LARGE.has(code) ? 413 : 400 } };
}
