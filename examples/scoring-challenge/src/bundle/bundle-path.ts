/** File extensions a bundle may hold: source, config and notes, all of them text. */
export const ALLOWED_EXTENSIONS: readonly string[] = [
  ".py",
  ".toml",
  ".yaml",
  ".yml",
  ".json",
  ".txt",
  ".md",
];

/** Longest path segment and path: short enough for any tar header the task runner writes. */
export const MAX_SEGMENT_CHARS = 64;
export const MAX_PATH_CHARS = 160;

// Plain ASCII names only: nothing for an extractor, a shell or a terminal to read two ways
// (no spaces, backslashes, control characters, Unicode look-alikes or hidden dot-files).
const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/** How one path problem is reported: which rule it breaks and a sentence naming the path. */
export interface PathProblem {
  rule: "absolute" | "traversal" | "invalid" | "extension";
  message: string;
}

/**
 * Why `path` (a ZIP entry name, without a directory's trailing "/") cannot be a bundle path, or
 * null when it can. `isFile` adds the extension rule.
 */
export function bundlePathProblem(path: string, isFile: boolean): PathProblem | null {
  if (path.startsWith("/") || /^[A-Za-z]:/.test(path)) {
    return { rule: "absolute", message: `bundle holds an absolute path: ${path}` };
  }
  const segments = path.split(/[/\\]/);
  if (segments.includes("..")) {
    return { rule: "traversal", message: `bundle holds a path that leaves the bundle: ${path}` };
  }
  if (path.length > MAX_PATH_CHARS) {
    return {
      rule: "invalid",
      message: `bundle holds a path longer than ${MAX_PATH_CHARS} characters: ${path.slice(0, 40)}…`,
    };
  }
  for (const segment of segments) {
    if (segment.length > MAX_SEGMENT_CHARS) {
      return {
        rule: "invalid",
        message: `bundle holds a name longer than ${MAX_SEGMENT_CHARS} characters: ${path}`,
      };
    }
    if (!SEGMENT.test(segment)) {
      return {
        rule: "invalid",
        message:
          `bundle holds a path that is not a plain relative name: ${JSON.stringify(path)} ` +
          "(letters, digits, '_', '-' and '.', segments joined by '/', none starting with '.')",
      };
    }
  }
  if (isFile && !ALLOWED_EXTENSIONS.some((extension) => path.endsWith(extension))) {
    return {
      rule: "extension",
      message: `bundle holds a file type that is not allowed: ${path} (allowed: ${ALLOWED_EXTENSIONS.join(" ")})`,
    };
  }
  return null;
}
