/**
 * The rules bundle v1 as the worker receives it, checked before it is trusted: every file's
 * length and sha256, the revision id (the canonical digest of the file list) and that it is the
 * revision the assignment names. The static checks come from its checks.json.
 */
import { canonicalDigest, sha256Hex } from "../crypto/index.js";
import type { RulesFile } from "../review/rules-bundle.js";
import { parseChecks, type StaticCheck } from "./static-checks.js";

export class RulesInvalidError extends Error {
  override readonly name = "RulesInvalidError";
}

/** The checks of a rules bundle answer, after every integrity check. */
export function checksFromRulesBundle(body: unknown, expectedRevisionId: string): StaticCheck[] {
  const bundle = body as { schema_version?: unknown; revision_id?: unknown; files?: unknown };
  if (bundle?.schema_version !== "rules-bundle/v1" || !Array.isArray(bundle.files)) {
    throw new RulesInvalidError("the rules answer is not a rules bundle v1");
  }
  const files = bundle.files as RulesFile[];
  const contents = new Map<string, Buffer>();
  for (const file of files) {
    const content = Buffer.from(String(file?.content_b64 ?? ""), "base64");
    const sha256 = sha256Hex(content);
    if (content.length !== file.length || sha256 !== file.sha256) {
      throw new RulesInvalidError(
        `rules file ${String(file?.path)} does not match its length and sha256`,
      );
    }
    contents.set(file.path, content);
  }
  if (canonicalDigest(files) !== bundle.revision_id) {
    throw new RulesInvalidError("the rules bundle's revision_id is not the digest of its files");
  }
  if (bundle.revision_id !== expectedRevisionId) {
    throw new RulesInvalidError("the rules bundle is not the revision the assignment names");
  }
  const checks = contents.get("checks.json");
  if (checks === undefined) throw new RulesInvalidError("the rules bundle has no checks.json");
  try {
    return parseChecks(checks.toString("utf8"));
  } catch (error) {
    throw new RulesInvalidError((error as Error).message);
  }
}
