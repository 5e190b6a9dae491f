/** Options of {@link TaskError}. */
export interface TaskErrorOptions {
  retryable: boolean;
  /** When to try again (from a 429/503 Retry-After). */
  retryAfterSeconds?: number;
  /** The HTTP status the broker answered, when it did. */
  status?: number;
  cause?: unknown;
}

/**
 * Why a task could not run. `code` is stable (branch on it); `retryable` and `retryAfterSeconds`
 * are read by the job worker, so throwing a TaskError out of a job handler retries or buries
 * the job accordingly.
 */
export class TaskError extends Error {
  override name = "TaskError";
  readonly code: string;
  readonly retryable: boolean;
  readonly retryAfterSeconds: number | undefined;
  readonly status: number | undefined;

  constructor(code: string, message: string, options: TaskErrorOptions) {
    super(message, options.cause === undefined ? {} : { cause: options.cause });
    this.code = code;
    this.retryable = options.retryable;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.status = options.status;
  }
}

/**
 * The task itself is refused and would be refused again: `invalid_task`, `weakening_refused`,
 * `limit_exceeded`, `invalid_file`, `invalid_label`, `image_unavailable`, `image_not_allowed`,
 * `gpu_unavailable`, `executor_error`, or whatever code the broker's 400 carried.
 */
export class TaskRejectedError extends TaskError {
  override name = "TaskRejectedError";
  /** What was refused, for machines: `field` (and `maximum`) or a file's `index`. */
  readonly details: Readonly<Record<string, string | number>>;
  constructor(
    code: string,
    message: string,
    options: {
      status?: number;
      cause?: unknown;
      details?: Readonly<Record<string, string | number>>;
    } = {},
  ) {
    const { details, ...rest } = options;
    super(code, message, { ...rest, retryable: false });
    this.details = details ?? {};
  }
}

/** The broker's workload quota is full (429 `quota_exceeded`): try again after `retryAfterSeconds`. */
export class TaskQuotaError extends TaskError {
  override name = "TaskQuotaError";
  declare readonly retryAfterSeconds: number;
  constructor(
    message: string,
    retryAfterSeconds: number,
    options: { code?: string; cause?: unknown } = {},
  ) {
    super(options.code ?? "quota_exceeded", message, {
      retryable: true,
      retryAfterSeconds,
      status: 429,
      cause: options.cause,
    });
  }
}

/** The broker refused the credentials (401) or the challenge (403): a configuration problem. */
export class TaskAuthError extends TaskError {
  override name = "TaskAuthError";
  constructor(code: string, message: string, status: number) {
    super(code, message, { retryable: false, status });
  }
}

/** The broker or the Docker engine could not be reached or failed: transient, retry later. */
export class TaskUnavailableError extends TaskError {
  override name = "TaskUnavailableError";
  constructor(
    code: string,
    message: string,
    options: { status?: number; retryAfterSeconds?: number; cause?: unknown } = {},
  ) {
    super(code, message, { ...options, retryable: true });
  }
}

/** The run was aborted through its signal; the container was removed. */
export class TaskAbortedError extends TaskError {
  override name = "TaskAbortedError";
  constructor(message: string, cause?: unknown) {
    super("aborted", message, { retryable: true, cause });
  }
}
