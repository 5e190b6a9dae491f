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

/** Hide credentials that hide inside free text: bearer values and passwords in URLs. */
export function redactText(text: string): string {
  return text
    .replace(/(bearer\s+)[^\s,;"']+/gi, `$1${REDACTED}`)
    .replace(/([a-z][a-z0-9+.-]*:\/\/[^:/@\s]+:)[^@\s]+@/gi, `$1${REDACTED}@`);
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

/** Create a JSON-lines logger; every line goes through {@link redact}. */
export function createLogger(options: LoggerOptions): Logger {
  const threshold = rank[options.level ?? envLevel()];
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const base = { name: options.name, ...options.fields };
  const emit = (level: LogLevel, message: string, fields?: Record<string, unknown>) => {
    if (rank[level] < threshold) return;
    const record = redact({ ...base, ...fields }) as Record<string, unknown>;
    write(
      JSON.stringify({
        time: new Date().toISOString(),
        level,
        msg: redactText(message),
        ...record,
      }),
    );
  };
  return {
    debug: (message, fields) => emit("debug", message, fields),
    info: (message, fields) => emit("info", message, fields),
    warn: (message, fields) => emit("warn", message, fields),
    error: (message, fields) => emit("error", message, fields),
    child: (fields) => createLogger({ ...options, fields: { ...options.fields, ...fields } }),
  };
}
