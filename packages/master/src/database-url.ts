// Where the master's PostgreSQL URL comes from: DATABASE_URL (or --database-url), or the file
// DATABASE_URL_FILE names (a Docker, Swarm or Kubernetes secret holding the whole URL), with an
// optional DATABASE_PASSWORD_FILE whose password is put, percent-encoded, into a URL given
// without one (the Compose deployment: one secret file shared with PostgreSQL and the backups).
// No message ever carries the URL or the password; the password is registered with the logger
// so no log line can either.
import { readFileSync } from "node:fs";
import { type ConfigIssue, registerLogSecret } from "@platform/core";

/** What {@link readDatabaseUrl} reads: the variables, and the flag that stands for DATABASE_URL. */
export interface DatabaseUrlSources {
  DATABASE_URL?: string | undefined;
  DATABASE_URL_FILE?: string | undefined;
  DATABASE_PASSWORD_FILE?: string | undefined;
}

/** The URL (none: the embedded database), or every problem found, each naming its variable. */
export type DatabaseUrlRead = { ok: true; url?: string } | { ok: false; issues: ConfigIssue[] };

const POSTGRES_URL = /^postgres(ql)?:\/\/\S+$/;

/**
 * Read the database URL. DATABASE_URL and DATABASE_URL_FILE together are refused (which one
 * would win is a guess a deployment should not depend on); `urlVariable` is what the user
 * typed for DATABASE_URL (`--database-url` when the flag gave it), for the messages.
 */
export function readDatabaseUrl(
  sources: DatabaseUrlSources,
  urlVariable = "DATABASE_URL",
): DatabaseUrlRead {
  const direct = sources.DATABASE_URL || undefined;
  const urlFile = sources.DATABASE_URL_FILE || undefined;
  const passwordFile = sources.DATABASE_PASSWORD_FILE || undefined;
  if (direct !== undefined && urlFile !== undefined)
    return failed(
      "DATABASE_URL_FILE",
      `is set together with ${urlVariable}: set only one (the file keeps the password out of the environment)`,
    );
  let url = direct;
  if (urlFile !== undefined) {
    const text = readSecretFile(urlFile, "DATABASE_URL_FILE");
    if (!text.ok) return text;
    url = text.value.trim();
    if (!POSTGRES_URL.test(url))
      return failed(
        "DATABASE_URL_FILE",
        `${urlFile} does not hold a postgres:// or postgresql:// URL`,
      );
  }
  if (url !== undefined) registerUrlPassword(url);
  if (passwordFile === undefined) return url === undefined ? { ok: true } : { ok: true, url };
  return withPassword(url, passwordFile, urlFile === undefined ? urlVariable : "DATABASE_URL_FILE");
}

/** `url` with the password of `file` (its first line) in it, percent-encoded. */
function withPassword(url: string | undefined, file: string, urlVariable: string): DatabaseUrlRead {
  if (url === undefined)
    return failed(
      "DATABASE_PASSWORD_FILE",
      "needs DATABASE_URL or DATABASE_URL_FILE (the server, user and database, without a password)",
    );
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return failed(urlVariable, "is not a URL");
  }
  if (parsed.password)
    return failed(
      "DATABASE_PASSWORD_FILE",
      `is set but ${urlVariable} carries a password too: keep only the file`,
    );
  if (!parsed.username)
    return failed(
      urlVariable,
      "names no user, so DATABASE_PASSWORD_FILE's password belongs to nobody (postgres://user@host/db)",
    );
  const text = readSecretFile(file, "DATABASE_PASSWORD_FILE");
  if (!text.ok) return text;
  // The first line, as PostgreSQL's own POSTGRES_PASSWORD_FILE and the backups read it.
  const password = text.value.split(/\r?\n/)[0] ?? "";
  if (password === "") return failed("DATABASE_PASSWORD_FILE", `${file} is empty`);
  registerLogSecret(password);
  parsed.password = encodeURIComponent(password);
  return { ok: true, url: parsed.href };
}

function readSecretFile(
  file: string,
  variable: string,
): { ok: true; value: string } | { ok: false; issues: ConfigIssue[] } {
  try {
    return { ok: true, value: readFileSync(file, "utf8") };
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? "unreadable";
    return failed(variable, `${file} cannot be read (${reason})`);
  }
}

/** Whatever the URL's password is, raw or decoded, is never printed by the logger. */
function registerUrlPassword(url: string): void {
  let raw: string | undefined;
  try {
    raw = new URL(url).password;
  } catch {
    return;
  }
  if (!raw) return;
  registerLogSecret(raw);
  try {
    registerLogSecret(decodeURIComponent(raw));
  } catch {
    // A malformed escape: the raw form is registered.
  }
}

function failed(variable: string, message: string): { ok: false; issues: ConfigIssue[] } {
  return { ok: false, issues: [{ variable, message }] };
}
