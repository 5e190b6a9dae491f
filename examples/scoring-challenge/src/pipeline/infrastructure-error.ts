/**
 * Failures that are the platform's, never the miner's: the executor (Docker engine or the
 * master's broker) is unreachable or refuses the task, the image is missing, no GPU is free, the
 * harness broke its own protocol. The submission goes back to `pending` and its job is retried
 * with backoff (the job queue reads `retryable` and `retryAfterSeconds` from the thrown error);
 * nothing is written on the miner's record but the count and last error of its level (the
 * eval-job health row), and the LLM review is not asked again (its verdict is cached).
 */
import { TaskAbortedError, TaskError } from "@platform/challenge-sdk/tasks";

/** Which part of the platform failed (process-next answers 503 with the matching code). */
export type InfrastructureCode =
  | "executor_unavailable"
  | "harness_error"
  | "gpu_unavailable"
  /** Anything else that went wrong on the service's side (the database, a bug). */
  | "internal_error";

/** An infrastructure failure: requeue the submission, retry the job. */
export class InfrastructureError extends Error {
  override readonly name = "InfrastructureError";
  readonly code: InfrastructureCode;
  readonly retryable = true;
  readonly retryAfterSeconds: number | undefined;

  constructor(
    code: InfrastructureCode,
    message: string,
    options: { retryAfterSeconds?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? {} : { cause: options.cause });
    this.code = code;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/**
 * Whether this failure happened while the platform was evaluating the bundle (the harness broke
 * its protocol, the database refused a write, a bug), so a retry runs the bundle again: those
 * are a handful (MAX_PLATFORM_FAILURES), then the bundle fails. Waiting for an executor or a GPU
 * that is not there runs nothing of the bundle's, and is retried as long as the job allows.
 */
export function evaluationFailed(error: InfrastructureError): boolean {
  return error.code === "harness_error" || error.code === "internal_error";
}

/**
 * The infrastructure failure a task runner's error means, or null for an abort (the lease was
 * lost or the worker is stopping: the job queue handles that, and nothing may be written).
 * Every other TaskError is the platform's: the task is built by this service from checked
 * parts, so a refusal (an image that is missing or not allowed, a limit over the broker's
 * maximum) is a deployment problem to fix, not a verdict on the bundle.
 */
export function infrastructureFromTask(error: unknown): InfrastructureError | null {
  if (error instanceof TaskAbortedError) return null;
  if (error instanceof TaskError) {
    return new InfrastructureError(
      "executor_unavailable",
      `the executor could not run the evaluation (${error.code}): ${error.message}`,
      {
        cause: error,
        ...(error.retryAfterSeconds ? { retryAfterSeconds: error.retryAfterSeconds } : {}),
      },
    );
  }
  return null;
}
