/**
 * The rules bundle v1: the review rules (`rules/` of the example) as the review VM receives them,
 * `{schema_version, revision_id, files: [{path, length, sha256, content_b64}]}`. Loaded once per
 * instance at start, so every assignment of one process names the same revision, and a bundle
 * that breaks the limits stops the start instead of failing the first review.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Static } from "@platform/challenge-sdk";
import { canonicalDigest, sha256Hex } from "../crypto/index.js";
import type { RulesBundleFile, RulesBundleResponse } from "./vm-schemas.js";

export const RULES_BUNDLE_SCHEMA_VERSION = "rules-bundle/v1";
/** At most this many files in a bundle. */
export const MAX_RULES_FILES = 128;
/** At most this many content bytes in a bundle, all files together (1 MiB). */
export const MAX_RULES_BYTES = 1024 * 1024;

/** One file of the bundle: its path relative to the rules directory, with "/" separators. */
export type RulesFile = Static<typeof RulesBundleFile>;

/** The bundle; its revision_id is canonicalDigest of `files` (a changed path or byte: a new one). */
export type RulesBundle = Static<typeof RulesBundleResponse>;

/** Limits of one bundle (the defaults are the interface's). */
export interface RulesBundleLimits {
  maxFiles: number;
  maxBytes: number;
}

/**
 * The bundle of every regular file under `directory`, sorted by path (UTF-16 code units, the
 * order of canonical JSON), so the revision id does not depend on the file system's order.
 * @throws Error naming the directory when it is empty, holds anything but files and folders
 * (a symlink could make the bundle depend on files outside it), or breaks a limit.
 */
export async function loadRulesBundle(
  directory: string | URL,
  limits: RulesBundleLimits = { maxFiles: MAX_RULES_FILES, maxBytes: MAX_RULES_BYTES },
): Promise<RulesBundle> {
  const root = typeof directory === "string" ? directory : fileURLToPath(directory);
  const paths = await listFiles(root, "", limits.maxFiles);
  if (paths.length === 0) throw rulesError(root, "holds no file");
  paths.sort((left, right) => (left < right ? -1 : left > right ? 1 : 0));
  const files: RulesFile[] = [];
  let total = 0;
  for (const path of paths) {
    const content = await readFile(join(root, path));
    total += content.length;
    if (total > limits.maxBytes) {
      throw rulesError(root, `holds more than ${limits.maxBytes} bytes (the bundle limit)`);
    }
    files.push({
      path,
      length: content.length,
      sha256: sha256Hex(content),
      content_b64: content.toString("base64"),
    });
  }
  return {
    schema_version: RULES_BUNDLE_SCHEMA_VERSION,
    revision_id: canonicalDigest(files),
    files,
  };
}

/** The relative paths of the regular files below `root/prefix`, refusing past `maxFiles`. */
async function listFiles(root: string, prefix: string, maxFiles: number): Promise<string[]> {
  const found: string[] = [];
  const entries = await readdir(join(root, prefix), { withFileTypes: true });
  for (const entry of entries) {
    const path = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) {
      found.push(...(await listFiles(root, path, maxFiles - found.length)));
    } else if (entry.isFile()) {
      found.push(path);
    } else {
      throw rulesError(root, `holds ${path}, which is neither a file nor a folder`);
    }
    if (found.length > maxFiles) {
      throw rulesError(root, `holds more than ${maxFiles} files (the bundle limit)`);
    }
  }
  return found;
}

function rulesError(root: string, reason: string): Error {
  return new Error(`the review rules directory ${root} ${reason}`);
}
