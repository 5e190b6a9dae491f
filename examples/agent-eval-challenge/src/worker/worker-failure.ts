/** Why a reference worker's run ended without its document receipted: a reason code and words. */
export class WorkerFailure<Reason extends string> extends Error {
  constructor(
    readonly reason: Reason,
    message: string,
  ) {
    super(message);
  }

  /** `error` as a failure: itself when it is one, else a worker_error with its message. */
  static of<Reason extends string>(error: unknown): WorkerFailure<Reason | "worker_error"> {
    if (error instanceof WorkerFailure) return error;
    return new WorkerFailure("worker_error", String((error as Error)?.message ?? error));
  }
}
