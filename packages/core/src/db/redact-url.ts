/**
 * Returns a connection URL safe to log: the password (userinfo or `?password=`) becomes `***`.
 * @example redactDatabaseUrl("postgres://app:s3cret@db:5432/app") // "postgres://app:***@db:5432/app"
 */
export function redactDatabaseUrl(url: string): string {
  return url
    .replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/?#@]*):[^@]*@/i, "$1:***@")
    .replace(/([?&]password=)[^&#]*/gi, "$1***");
}

/** Removes the password of `url` from free text (a driver's error message, say), raw or decoded. */
export function redactSecrets(text: string, url: string): string {
  let out = text.split(url).join(redactDatabaseUrl(url));
  for (const secret of passwordsOf(url)) out = out.split(secret).join("***");
  return out;
}

function passwordsOf(url: string): string[] {
  const found: string[] = [];
  const userinfo = /^[a-z][a-z0-9+.-]*:\/\/[^:/?#@]*:([^@]*)@/i.exec(url)?.[1];
  const query = /[?&]password=([^&#]*)/i.exec(url)?.[1];
  for (const raw of [userinfo, query]) {
    if (!raw) continue;
    found.push(raw);
    try {
      found.push(decodeURIComponent(raw));
    } catch {
      // A malformed escape is still redacted in its raw form above.
    }
  }
  // Longest first, so a password containing another one is removed whole.
  return [...new Set(found)].sort((a, b) => b.length - a.length);
}
