/** Why a worker client's request did not end in a 2xx answer. */
export type WorkerClientErrorKind =
  /** The server answered with a definitive refusal (a 4xx other than 408/425/429, or a 3xx). */
  | "refused"
  /** No answer: the connection failed or dropped. */
  | "no_answer"
  /** No answer within the per-attempt timeout. */
  | "timeout"
  /** `deliver` ran out of time with only retryable answers (the last one is in `status`). */
  | "deadline"
  /** The caller's signal aborted the request. */
  | "aborted"
  /** The answer was larger than the client reads. */
  | "too_large";

/**
 * A request that ended without a 2xx: what kind of failure, the last HTTP status (null when
 * there was no answer), and the stable `code` and message of the server's error body. Its
 * message never holds the client's token (it is redacted from anything the server echoed).
 */
export class WorkerClientError extends Error {
  override readonly name = "WorkerClientError";
  constructor(
    message: string,
    readonly kind: WorkerClientErrorKind,
    readonly status: number | null = null,
    readonly code: string | null = null,
    /** The server's own words (its error body's `detail`), or null. */
    readonly detail: string | null = null,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }
}
