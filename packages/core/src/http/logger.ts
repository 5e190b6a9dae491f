import { wordlist } from "@scure/bip39/wordlists/english.js";
import { activeTraceIds } from "../ops/tracing.js";

/** Log levels in increasing severity; "silent" turns a logger off. */
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

/** A structured logger writing one JSON object per line. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  /** A logger that adds `fields` to every line (e.g. a request id). */
  child(fields: Record<string, unknown>): Logger;
}

// Any field whose name looks like a credential is never written, whatever its value.
const SECRET_KEY =
  /(token|secret|password|passwd|authorization|cookie|signature|mnemonic|seed|private|api[-_]?key|database[-_]?url|dsn|credential)/i;
const REDACTED = "[redacted]";

// The platform's own token shapes (core's generateToken, the master's derived challenge and
// broker tokens): recognisable wherever they turn up, an error message included.
const PLATFORM_TOKEN = /\b(?:pt|ct|bt)_[A-Za-z0-9_-]{32,}/g;
// Twelve or more short lower-case words in a row: a mnemonic when every one is a BIP39 word.
const WORD_RUN = /\b(?:[a-z]{3,8}[ \t]+){11,}[a-z]{3,8}\b/g;
let bip39: Set<string> | undefined;

function redactMnemonics(text: string): string {
  if (!/[a-z]{3,8}\s[a-z]{3,8}\s/.test(text)) return text;
  return text.replace(WORD_RUN, (run) => {
    bip39 ??= new Set(wordlist);
    // Cut every stretch of 12+ consecutive BIP39 words out of the run (prose around it stays).
    const words = [...run.matchAll(/[a-z]+/g)];
    let out = "";
    let copied = 0;
    let start = 0;
    for (let i = 0; i <= words.length; i++) {
      if (i < words.length && bip39.has(words[i]![0])) continue;
      if (i - start >= 12) {
        const from = words[start]!.index;
        const last = words[i - 1]!;
        out += `${run.slice(copied, from)}${REDACTED} (mnemonic)`;
        copied = last.index + last[0].length;
      }
      start = i + 1;
    }
    return out + run.slice(copied);
  });
}

// Values registered as secrets (the admin token, a challenge's tokens): cut out of every line.
const secrets = new Set<string>();

/**
 * Never write `value` in a log line, whatever field or message carries it: for secrets whose
 * shape says nothing (an operator-chosen admin token). Values under 8 characters are ignored
 * (they would cut ordinary words out of messages). Process-wide and permanent.
 * @example registerLogSecret(config.adminToken);
 */
export function registerLogSecret(value: string | null | undefined): void {
  if (typeof value !== "string" || value.length < 8) return;
  secrets.add(value);
  // Lines are JSON: a value with quotes, backslashes or controls appears escaped there.
  const escaped = JSON.stringify(value).slice(1, -1);
  if (escaped !== value) secrets.add(escaped);
}

/**
 * Hide credentials that hide inside free text: bearer values, passwords in URLs, the platform's
 * token shapes (`pt_`, `ct_`, `bt_`) and mnemonics (12+ BIP39 words in a row).
 */
export function redactText(text: string): string {
  return redactMnemonics(
    text
      .replace(/(bearer\s+)[^\s,;"']+/gi, `$1${REDACTED}`)
      .replace(/([a-z][a-z0-9+.-]*:\/\/[^:/@\s]+:)[^@\s]+@/gi, `$1${REDACTED}@`)
      .replace(PLATFORM_TOKEN, REDACTED),
  );
}

/** `line` with every registered secret value cut out. */
function withoutSecrets(line: string): string {
  let out = line;
  for (const secret of secrets) if (out.includes(secret)) out = out.replaceAll(secret, REDACTED);
  return out;
}

/** A deep copy of `value` with secret-named fields and secret-looking text redacted. */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > 8) return "[too deep]";
  if (typeof value === "string") return redactText(value);
  if (value instanceof Error) {
    return {
      name: value.name,
      message: redactText(value.message),
      stack: value.stack && redactText(value.stack),
    };
  }
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      out[key] = SECRET_KEY.test(key) ? REDACTED : redact(item, depth + 1);
    }
    return out;
  }
  return value;
}

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  name: string;
  /** Defaults to LOG_LEVEL from the environment, else "info". */
  level?: LogLevel;
  /** Where lines go; defaults to stderr so stdout stays free for command output. */
  write?: (line: string) => void;
  fields?: Record<string, unknown>;
}

function envLevel(): LogLevel {
  const level = process.env.LOG_LEVEL?.toLowerCase();
  return level && level in rank ? (level as LogLevel) : "info";
}

/**
 * Create a JSON-lines logger; every line goes through {@link redact}, and while a span is
 * active (tracing on) carries its `trace_id` and `span_id`.
 */
export function createLogger(options: LoggerOptions): Logger {
  const threshold = rank[options.level ?? envLevel()];
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const base = { name: options.name, ...options.fields };
  const emit = (level: LogLevel, message: string, fields?: Record<string, unknown>) => {
    if (rank[level] < threshold) return;
    const record = redact({ ...base, ...fields }) as Record<string, unknown>;
    // With tracing on, a line written inside a span names it, so logs and traces join up.
    const ids = activeTraceIds();
    const line = JSON.stringify({
      time: new Date().toISOString(),
      level,
      msg: redactText(message),
      ...ids,
      ...record,
    });
    write(secrets.size === 0 ? line : withoutSecrets(line));
  };
  return {
    debug: (message, fields) => emit("debug", message, fields),
    info: (message, fields) => emit("info", message, fields),
    warn: (message, fields) => emit("warn", message, fields),
    error: (message, fields) => emit("error", message, fields),
    child: (fields) => createLogger({ ...options, fields: { ...options.fields, ...fields } }),
  };
}
