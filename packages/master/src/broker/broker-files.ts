import { checkTaskFiles, type PlacedFile, type TaskFileCaps } from "@platform/challenge-sdk";
import type { BrokerFile } from "@platform/core";
import { asBrokerRefusal } from "./hardening.js";

/**
 * Check every file of a request with the SDK's rules (relative path without `..`, no absolute
 * form, NUL or control characters; canonical base64; per-file, total and count caps; no path
 * both a file and a directory) and decode it. Throws 400 `invalid_file` with the entry's index.
 */
export function validateFiles(
  files: readonly BrokerFile[] | undefined,
  caps: TaskFileCaps,
): PlacedFile[] {
  return asBrokerRefusal(() => checkTaskFiles(files, caps));
}
