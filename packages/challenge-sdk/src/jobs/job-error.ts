import { pgSafeText } from "../pg-safe-text.js";

/** Options of {@link JobError}. */
export interface JobErrorOptions {
  /** false: the job goes straight to `dead`, whatever attempts it has left (default true). */
  retryable?: boolean;
  /** Wait at least this long before the next attempt (e.g. a quota's Retry-After). */
  retryAfterSeconds?: number;
  cause?: unknown;
}

/**
 * An error a job handler throws to say how its job should be retried. Any error with the same
 * `retryable` / `retryAfterSeconds` properties works (the task runner's `TaskError` has them);
 * any other error is retried with backoff.
 * @example throw new JobError("the bundle is not a ZIP", { retryable: false });
 */
export class JobError extends Error {
  override readonly name = "JobError";
  readonly retryable: boolean;
  readonly retryAfterSeconds: number | undefined;

  constructor(message: string, options: JobErrorOptions = {}) {
    super(message, options.cause === undefined ? {} : { cause: options.cause });
    this.retryable = options.retryable ?? true;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** How a thrown value asks to be retried: read from its `retryable` / `retryAfterSeconds`. */
export function retryHints(error: unknown): { retryable: boolean; retryAfterSeconds?: number } {
  const candidate = (typeof error === "object" && error !== null ? error : {}) as {
    retryable?: unknown;
    retryAfterSeconds?: unknown;
  };
  const retryable = candidate.retryable !== false;
  const after = candidate.retryAfterSeconds;
  if (typeof after === "number" && Number.isFinite(after) && after > 0) {
    return { retryable, retryAfterSeconds: after };
  }
  return { retryable };
}

/** The text stored as a job's `last_error`: name, message and code, capped at 8 KiB. */
export function errorText(error: unknown): string {
  let text: string;
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    text = `${error.name}: ${error.message}${typeof code === "string" ? ` [${code}]` : ""}`;
  } else if (typeof error === "string") {
    text = error;
  } else {
    try {
      text = JSON.stringify(error) ?? String(error);
    } catch {
      text = String(error);
    }
  }
  // Postgres text cannot hold NUL (a handler's error may quote a submission's text, and a
  // refused fail() would leave the job running until its lease expired); a cap keeps one
  // runaway message from bloating every row read.
  text = pgSafeText(text);
  return text.length > 8192 ? pgSafeText(`${text.slice(0, 8191)}…`) : text;
}
