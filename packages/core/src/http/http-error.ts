import { textResponse } from "./_known-body.js";

/**
 * The one error type a handler throws to answer a client. It carries a stable machine-readable
 * `code` beside the human `message`, and renders itself, so every route answers errors alike:
 * `{"detail": message, "code": code}` (`detail` keeps FastAPI clients working).
 */
export class HttpError extends Error {
  override readonly name = "HttpError";
  readonly status: number;
  readonly code: string;
  readonly headers: Record<string, string>;
  /** Extra public fields merged into the body (never put secrets here). */
  readonly extra: Record<string, unknown>;

  constructor(
    status: number,
    code: string,
    message: string,
    options: {
      cause?: unknown;
      headers?: Record<string, string>;
      extra?: Record<string, unknown>;
    } = {},
  ) {
    super(message, { cause: options.cause });
    this.status = status;
    this.code = code;
    this.headers = options.headers ?? {};
    this.extra = options.extra ?? {};
  }

  /** The response a client sees: status, stable code and message; never the cause. */
  toResponse(): Response {
    const body = JSON.stringify({ detail: this.message, code: this.code, ...this.extra });
    return textResponse(body, {
      status: this.status,
      headers: { "content-type": "application/json", ...this.headers },
    });
  }
}

/** True for anything that renders itself as an HTTP error (works across duplicated copies). */
export function isHttpError(value: unknown): value is HttpError {
  return value instanceof HttpError;
}
