/**
 * What the public registry may show of operator-written data (metadata, env, URLs). Unauthenticated
 * readers get it, so it errs on the side of withholding: a key that looks sensitive is dropped
 * at every depth, and so is any value that carries a credential, whatever its key says.
 */

// Key names that say "secret" in any casing or separator style (api_key, apiKey, API-KEY).
const SENSITIVE_KEY =
  /(token|secret|passw|pwd|private|api[-_]?key|access[-_]?key|^key$|[-_.]key$|^key[-_.]|credential|auth(?!or)|bearer|cookie|session|signature|database[-_]?url|dsn|conn(ection)?[-_]?str|mnemonic|seed|salt|internal|note)/i;

// scheme://anything@host: userinfo, with or without a password (https://TOKEN@host is one too).
const URL_USERINFO = /[a-z][a-z0-9+.-]*:\/\/[^/\s?#]*@/i;

// Strings shaped like well-known credentials, wherever they appear in the value.
const KEY_SHAPED = [
  /\bsk-[A-Za-z0-9_-]{16,}/, // OpenAI-style secret keys
  /\b(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}/, // GitHub tokens
  /\bgithub_pat_[A-Za-z0-9_]{20,}/,
  /\bglpat-[A-Za-z0-9_-]{20,}/, // GitLab
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/, // Slack
  /\bAKIA[0-9A-Z]{16}\b/, // AWS access key id
  /\bAIza[0-9A-Za-z_-]{35}\b/, // Google API key
  /\b(ct|bt)_[A-Za-z0-9_-]{16,}/, // this master's own challenge and broker tokens
  /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\./, // JWT
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
  /\bBearer\s+\S{8,}/i,
];

// A long run of token characters mixing upper case, lower case and digits: what random keys
// look like and prose, slugs, versions and hex digests do not.
const HIGH_ENTROPY = /[A-Za-z0-9_+/=-]{32,}/g;

function looksRandom(run: string): boolean {
  return /[A-Z]/.test(run) && /[a-z]/.test(run) && /[0-9]/.test(run);
}

/** Does this key name look like it holds a secret? */
export function isSensitiveKey(key: string): boolean {
  return SENSITIVE_KEY.test(key);
}

/** Does this string carry a credential: URL userinfo, a known key shape, or a random-looking run? */
export function carriesCredential(value: string): boolean {
  if (URL_USERINFO.test(value)) return true;
  if (KEY_SHAPED.some((pattern) => pattern.test(value))) return true;
  return (value.match(HIGH_ENTROPY) ?? []).some(looksRandom);
}

const WITHHELD = Symbol("withheld");

function redact(value: unknown, depth: number): unknown {
  if (typeof value === "string") return carriesCredential(value) ? WITHHELD : value;
  if (value === null || typeof value !== "object") return value;
  // Deeper than any honest metadata: withheld rather than walked without end.
  if (depth > 32) return WITHHELD;
  if (Array.isArray(value)) {
    return value.map((item) => redact(item, depth + 1)).filter((item) => item !== WITHHELD);
  }
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (isSensitiveKey(key)) continue;
    const kept = redact(item, depth + 1);
    if (kept !== WITHHELD) out[key] = kept;
  }
  return out;
}

/**
 * A copy of `record` fit for the public: keys that look sensitive dropped at every depth, and
 * every string (or array item) that carries a credential dropped with its key.
 * @example publicRecord({ homepage: "https://x.org", config: { api_token: "t" }, db: "postgres://u:p@h/x" }) // { homepage: "https://x.org", config: {} }
 */
export function publicRecord(record: Record<string, unknown>): Record<string, unknown> {
  return redact(record, 0) as Record<string, unknown>;
}

/**
 * A challenge's environment as the public sees it: the variable names only (each maps to
 * null). Values configure a container and are the likeliest place for a connection string.
 */
export function publicEnvNames(env: Record<string, string>): Record<string, null> {
  return Object.fromEntries(
    Object.keys(env)
      .sort()
      .map((name) => [name, null]),
  );
}

/** `url` without its userinfo (`user:pass@`), or "" when it is not a URL at all. */
export function withoutUserinfo(url: string | null): string {
  if (!url) return "";
  try {
    const parsed = new URL(url);
    if (parsed.username === "" && parsed.password === "") return url;
    parsed.username = "";
    parsed.password = "";
    return parsed.toString();
  } catch {
    return "";
  }
}
