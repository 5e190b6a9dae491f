/**
 * The path rules every ZIP reader needs whatever the archive holds: a name that would land
 * outside the extraction folder, or that an extractor, a shell or a terminal could read two
 * ways, is refused before any byte is inflated. A caller's own naming rules (extensions,
 * character sets, lengths) come on top, through `readZip`'s `checkPath`.
 */

// Control characters (C0, DEL, C1): invisible in a listing, and some extractors act on them.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Why `path` (an entry name without a directory's trailing "/") is unsafe in any archive, or
 * null. `noun` names the archive in the message ("bundle", "archive").
 */
export function unsafeZipPath(path: string, noun: string): string | null {
  if (path.startsWith("/") || path.startsWith("\\") || /^[A-Za-z]:/.test(path)) {
    return `${noun} holds an absolute path: ${path}`;
  }
  // A backslash is a separator to Windows extractors: "..\\x" escapes there.
  const segments = path.split(/[/\\]/);
  if (segments.includes("..")) {
    return `${noun} holds a path that leaves the ${noun}: ${path}`;
  }
  if (
    path.includes("\\") ||
    CONTROL.test(path) ||
    segments.some((segment) => segment === "" || segment === ".")
  ) {
    return `${noun} holds a path that is not a plain relative name: ${JSON.stringify(path)}`;
  }
  return null;
}
