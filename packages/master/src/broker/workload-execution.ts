import { type BrokerRunResponse, HttpError, type Logger } from "@platform/core";
import {
  type Executor,
  ExecutorError,
  type WorkloadResult,
  type WorkloadSpec,
} from "./executor.js";
import type { RunLedger, RunStatus } from "./run-ledger.js";

const EXECUTOR_STATUS: Record<ExecutorError["code"], number> = {
  image_unavailable: 400,
  executor_error: 400,
  gpu_unavailable: 400,
};

/** The status a row ends with, from how its workload ended. */
function endStatus(result: WorkloadResult, aborted: boolean): Exclude<RunStatus, "running"> {
  if (aborted) return "failed";
  if (result.removed) return "lost";
  if (result.timed_out) return "timed_out";
  if (result.oom_killed) return "oom_killed";
  return "exited";
}

/**
 * Runs admitted workloads on the executor and keeps track of those in flight (the reaper leaves
 * them alone; `stopAll` kills them on shutdown). A workload's row always ends BEFORE the
 * workload is removed, so a live row whose workload is gone means it was lost.
 */
export class WorkloadExecution {
  private readonly inFlight = new Map<string, { abort: AbortController; done: Promise<unknown> }>();

  constructor(
    private readonly executor: Executor,
    private readonly ledger: RunLedger,
    private readonly log: Logger,
  ) {}

  /** Is this process running the workload `name` right now? */
  isRunning(name: string): boolean {
    return this.inFlight.has(name);
  }

  /**
   * Run `spec` to its end; the caller hanging up (`signal`) kills it. A workload removed from
   * outside (cleanup, reaper, a disabled challenge) answers 409 `workload_removed`.
   */
  async run(spec: WorkloadSpec, signal?: AbortSignal): Promise<BrokerRunResponse> {
    const started = Date.now();
    const abort = new AbortController();
    const onAbort = () => abort.abort();
    signal?.addEventListener("abort", onAbort, { once: true });
    if (signal?.aborted) abort.abort();
    const execution = this.execute(spec, abort.signal);
    this.inFlight.set(spec.name, { abort, done: execution.catch(() => {}) });
    try {
      const result = await execution;
      if (result.removed) {
        throw new HttpError(
          409,
          "workload_removed",
          `Workload ${spec.name} was removed (cleanup, reaper or a disabled challenge) before it finished`,
          { extra: { container_name: spec.name } },
        );
      }
      return {
        container_name: spec.name,
        stdout: result.stdout,
        stderr: result.stderr,
        returncode: result.returncode,
        timed_out: result.timed_out,
        stdout_truncated: result.stdout_truncated,
        stderr_truncated: result.stderr_truncated,
        oom_killed: result.oom_killed,
        duration_ms: Date.now() - started,
      };
    } finally {
      signal?.removeEventListener("abort", onAbort);
      this.inFlight.delete(spec.name);
    }
  }

  /** Kill every workload this process is running, and wait until each has been removed. */
  async stopAll(): Promise<void> {
    const running = [...this.inFlight.values()];
    for (const { abort } of running) abort.abort();
    await Promise.all(running.map(({ done }) => done));
  }

  /**
   * Run on the executor and always end the row, before the workload is removed. A remover
   * (cleanup, reaper) also ends the row before removing the workload, so a row already ended
   * here means the workload was taken away: the run reports `removed` whatever exit code the
   * kill produced.
   */
  private async execute(spec: WorkloadSpec, signal: AbortSignal): Promise<WorkloadResult> {
    let first = true;
    const ended = async (result: WorkloadResult) => {
      first = await this.ledger.finish(
        spec.name,
        endStatus(result, signal.aborted),
        result.returncode,
      );
    };
    try {
      const result = await this.executor.run(spec, signal, ended);
      return first ? result : { ...result, removed: true, returncode: null };
    } catch (error) {
      await this.ledger
        .finish(spec.name, "failed")
        .catch((e) => this.log.error("could not end a broker row", { name: spec.name, error: e }));
      if (error instanceof ExecutorError)
        throw new HttpError(EXECUTOR_STATUS[error.code], error.code, error.message);
      throw error;
    }
  }
}
