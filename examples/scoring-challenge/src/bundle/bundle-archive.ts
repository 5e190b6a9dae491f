/**
 * The bundle's archive rules, declared once: the submit route hands them to the SDK
 * (`router.submission({ archive })`), which decodes the base64, checks the size and reads the
 * ZIP under them before the handler runs; the pipeline and the fingerprint store re-read stored
 * bundles under the same object, so a bundle accepted at submit is never refused later by other
 * limits. Refusals keep the bundle's API codes (`bundle_*`).
 */
import type { SubmissionArchive } from "@platform/challenge-sdk";
import { ZIP_LIMITS } from "@platform/challenge-sdk/zip";
import { BUNDLE_FILENAME } from "../api-schemas.js";
import { bundlePathProblem } from "./bundle-path.js";

/** Longest `code` accepted: 7.5 MiB of base64. */
export const MAX_BASE64_CHARS = 7.5 * 1024 * 1024;
/** Largest bundle ZIP, in bytes: what MAX_BASE64_CHARS of base64 decodes to (about 5.6 MiB). */
export const MAX_ZIP_BYTES = (MAX_BASE64_CHARS / 4) * 3;

/**
 * Most bytes a bundle may hold unpacked: 256 KiB, ten times a nanoGPT-sized model and its
 * training loop. The cap bounds what a bundle can carry into a run (docs/challenges/scoring.md,
 * "What a miner can know in advance"): at most ~230 KB of information in UTF-8 text, about
 * 1.2 MB of English at the best compression known, against a pool of 100 MB and more.
 */
export const MAX_UNPACKED_BYTES = 256 * 1024;

/** A bundle: `code` of the JSON body (base64), or the bridge's raw application/zip. */
export const BUNDLE_ARCHIVE: SubmissionArchive = Object.freeze({
  field: "code",
  maxBytes: MAX_ZIP_BYTES,
  noun: "bundle",
  filename: new RegExp(BUNDLE_FILENAME),
  limits: { ...ZIP_LIMITS, maxUnpackedBytes: MAX_UNPACKED_BYTES },
  // Plain ASCII names with an allowed extension (bundle-path.ts), each rule its own code.
  checkPath: (path: string, isFile: boolean) => {
    const problem = bundlePathProblem(path, isFile);
    if (problem === null) return null;
    const rule =
      problem.rule === "extension" ? "bundle_forbidden_extension" : "bundle_invalid_path";
    return { rule, message: problem.message };
  },
  // The SDK's neutral codes, as the bundle's API has always named them.
  codes: Object.freeze({
    archive_too_large: "bundle_too_large",
    symlink: "bundle_symlink",
    special_file: "bundle_special_file",
    invalid_path: "bundle_invalid_path",
    duplicate_path: "bundle_duplicate_path",
    directory_conflict: "bundle_directory_conflict",
    unreadable_entry: "bundle_unreadable_entry",
  }),
});
