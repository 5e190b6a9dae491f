/**
 * The static checks of the rules bundle's checks.json (review-checks/v1), applied to every file
 * of the agent ZIP: a check names the files it looks at (globs on the basename) and either a
 * pattern (a JavaScript regular expression, matched line by line), a longest line, or nothing
 * (the file's presence is the finding, as for shipped binaries). The rules are data the service
 * serves, so the worker refuses a checks.json it cannot read rather than reviewing with less.
 */
import type { ZipFileEntry } from "@platform/challenge-sdk/zip";
import type { ReviewFindingRecord, ReviewVerdict } from "../review/review-envelope.js";

export const CHECKS_SCHEMA_VERSION = "review-checks/v1";
/** At most this many findings in a report (the envelope's limit). */
export const MAX_FINDINGS = 256;

export type CheckSeverity = "reject" | "escalate";

/** One check of checks.json, compiled. */
export interface StaticCheck {
  id: string;
  rule: number;
  severity: CheckSeverity;
  /** The basename globs, compiled. */
  files: RegExp[];
  pattern: RegExp | null;
  maxLineLength: number | null;
  message: string;
}

export class ChecksFileError extends Error {
  override readonly name = "ChecksFileError";
}

const CHECK_ID = /^[a-z][a-z0-9_.-]{0,63}$/;

/** Parse and compile checks.json; throws ChecksFileError naming the first bad field. */
export function parseChecks(text: string): StaticCheck[] {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new ChecksFileError(`checks.json is not JSON: ${(error as Error).message}`);
  }
  const root = document as { schema_version?: unknown; checks?: unknown };
  if (root?.schema_version !== CHECKS_SCHEMA_VERSION || !Array.isArray(root.checks)) {
    throw new ChecksFileError(`checks.json is not ${CHECKS_SCHEMA_VERSION} with a checks array`);
  }
  return root.checks.map((raw, index) => compileCheck(raw, index));
}

function compileCheck(raw: unknown, index: number): StaticCheck {
  const check = raw as Record<string, unknown>;
  const where = `checks.json check ${index}`;
  if (typeof check?.id !== "string" || !CHECK_ID.test(check.id)) {
    throw new ChecksFileError(`${where}: id must match ${CHECK_ID.source}`);
  }
  if (check.severity !== "reject" && check.severity !== "escalate") {
    throw new ChecksFileError(`${where} (${check.id}): severity must be reject or escalate`);
  }
  const files = check.files;
  if (
    !Array.isArray(files) ||
    files.length === 0 ||
    !files.every((glob) => typeof glob === "string")
  ) {
    throw new ChecksFileError(`${where} (${check.id}): files must be a non-empty list of globs`);
  }
  let pattern: RegExp | null = null;
  if (check.pattern !== undefined) {
    try {
      pattern = new RegExp(String(check.pattern));
    } catch (error) {
      throw new ChecksFileError(`${where} (${check.id}): bad pattern: ${(error as Error).message}`);
    }
  }
  const max = check.max_line_length;
  if (max !== undefined && (!Number.isInteger(max) || (max as number) < 1)) {
    throw new ChecksFileError(`${where} (${check.id}): max_line_length must be a positive integer`);
  }
  if (typeof check.message !== "string" || check.message === "") {
    throw new ChecksFileError(`${where} (${check.id}): message is required`);
  }
  return {
    id: check.id,
    rule: typeof check.rule === "number" ? check.rule : 0,
    severity: check.severity,
    files: (files as string[]).map(globToRegExp),
    pattern,
    maxLineLength: max === undefined ? null : (max as number),
    message: check.message,
  };
}

/** A basename glob (`*`, `?`) as an anchored regular expression. */
export function globToRegExp(glob: string): RegExp {
  const body = glob
    .split("")
    .map((character) => {
      if (character === "*") return ".*";
      if (character === "?") return ".";
      return character.replace(/[.+^${}()|[\]\\/]/g, "\\$&");
    })
    .join("");
  return new RegExp(`^${body}$`, "s");
}

const basename = (path: string): string => path.slice(path.lastIndexOf("/") + 1);

/** Where in `text` a check fires: a 1-based line number, or null. */
function firstHit(check: StaticCheck, text: string): number | null {
  if (check.pattern === null && check.maxLineLength === null) return 1;
  const lines = text.split(/\r?\n/);
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index]!;
    if (check.pattern?.test(line)) return index + 1;
    if (check.maxLineLength !== null && line.length > check.maxLineLength) return index + 1;
  }
  return null;
}

/**
 * Every check on every file it names: at most one finding per check and file (the first line
 * it fires on), at most MAX_FINDINGS in all. Severity reject is a `block` finding, escalate an
 * `escalate` one.
 */
export function runStaticChecks(
  checks: readonly StaticCheck[],
  files: readonly ZipFileEntry[],
): ReviewFindingRecord[] {
  const findings: ReviewFindingRecord[] = [];
  for (const file of files) {
    const name = basename(file.path);
    const text = file.data.toString("utf8");
    for (const check of checks) {
      if (!check.files.some((glob) => glob.test(name))) continue;
      const line = firstHit(check, text);
      if (line === null) continue;
      const where = check.pattern === null && check.maxLineLength === null ? "" : ` (line ${line})`;
      findings.push({
        check_id: check.id,
        severity: check.severity === "reject" ? "block" : "escalate",
        path: file.path.slice(0, 512),
        message: `rule ${check.rule}: ${check.message}${where}`.slice(0, 1024),
      });
      if (findings.length === MAX_FINDINGS) return findings;
    }
  }
  return findings;
}

/** The verdict the findings call for: any block rejects, else any escalate escalates. */
export function verdictOf(
  findings: readonly Pick<ReviewFindingRecord, "severity">[],
): ReviewVerdict {
  if (findings.some((finding) => finding.severity === "block")) return "reject";
  if (findings.some((finding) => finding.severity === "escalate")) return "escalate";
  return "allow";
}

const STRICTNESS: Record<ReviewVerdict, number> = { allow: 0, escalate: 1, reject: 2 };

/** The stricter of two verdicts: a second opinion can tighten a verdict, never loosen it. */
export function stricterVerdict(left: ReviewVerdict, right: ReviewVerdict): ReviewVerdict {
  return STRICTNESS[right] > STRICTNESS[left] ? right : left;
}
