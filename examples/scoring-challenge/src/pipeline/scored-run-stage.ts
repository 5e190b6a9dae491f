/**
 * The scored run: `python3 /opt/harness/run.py` in the evaluation image through the SDK task
 * runner (no network, read-only root, non-root user, CPU/memory/pid limits, a /tmp quota, a
 * watchdog), on the corpus slice the service pins, then `scoreRun` turns the harness's
 * measurements into a status and a score. The harness never reports a score, and nothing the
 * bundle prints is read: only the scorer's line with this run's nonce, and never from a run the
 * watchdog stopped.
 *
 * The stream is the submission's epoch's (the same bytes for every run of the epoch, drawn from the
 * challenge's secret) and the holdout is drawn for this run alone (scored-bytes.ts).
 *
 * With GPU_COUNT > 0 a run asks for one GPU. Under the docker executor (a host of the
 * challenge's own) it waits (FIFO) for a GPU lease here and holds it while it runs; no GPU free
 * within GPU_WAIT_SECONDS sends the submission back to the queue. Under the broker the master
 * admits GPU runs itself (its run ledger leases devices; a run past them is refused 429 with
 * Retry-After and comes back through the queue), so no lease is taken here: a second ledger
 * would only disagree with the master's. CPU runs hold none.
 */
import type { Bundle } from "../bundle/index.js";
import { acquireGpuLease, releaseGpuLease } from "../gpu-leases.js";
import { newHarnessNonce, parseRunReport, type RunReport } from "../harness-report.js";
import { DEFAULT_SEQUENCE_LENGTH, runTask } from "../harness-task.js";
import { type ScoreOutcome, scoreRun } from "../score.js";
import { epochSeed, scoredBytes } from "../scored-bytes.js";
import type { ClaimedSubmission } from "./claim-submission.js";
import { InfrastructureError, infrastructureFromTask } from "./infrastructure-error.js";
import type { PipelineDeps } from "./pipeline-context.js";

/** A run's outcome for the bundle, and the report it came from (null: there was none). */
export type RunStageOutcome = Exclude<ScoreOutcome, { status: "infrastructure" }> & {
  report: RunReport | null;
};

// The watchdog kills a run at its timeout; a GPU lease older than that plus this margin is stale.
const LEASE_MARGIN_SECONDS = 300;

/** Run `bundle` for its score. Throws InfrastructureError for anything that is not its doing. */
export async function scoredRunStage(
  deps: Pick<PipelineDeps, "sql" | "runner" | "options" | "corpus" | "windowSecret">,
  submission: Pick<ClaimedSubmission, "id" | "epochId">,
  bundle: Bundle,
  signal: AbortSignal,
): Promise<RunStageOutcome> {
  const { options } = deps;
  const { id } = submission;
  const gpus = options.gpu.count > 0 ? 1 : 0;
  const leased = gpus > 0 && options.executor === "docker";
  if (leased) {
    const lease = await acquireGpuLease(deps.sql, id, {
      count: options.gpu.count,
      tier: options.gpu.tier,
      waitSeconds: options.gpu.waitSeconds,
      staleAfterSeconds: options.runTimeoutSeconds + LEASE_MARGIN_SECONDS,
      signal,
    });
    if (!lease) {
      throw new InfrastructureError(
        "gpu_unavailable",
        `no GPU lease was free within ${options.gpu.waitSeconds} s`,
        { retryAfterSeconds: 10 },
      );
    }
  }
  try {
    return await run(deps, submission, bundle, signal, gpus);
  } finally {
    if (leased) await releaseGpuLease(deps.sql, id);
  }
}

async function run(
  deps: Pick<PipelineDeps, "runner" | "options" | "corpus" | "windowSecret">,
  { id, epochId }: Pick<ClaimedSubmission, "id" | "epochId">,
  bundle: Bundle,
  signal: AbortSignal,
  gpus: number,
): Promise<RunStageOutcome> {
  const { options } = deps;
  const nonce = newHarnessNonce();
  const slices = scoredBytes(deps.corpus, epochSeed(deps.windowSecret, epochId), {
    tokenBudget: options.budgets.tokenBudget,
    holdoutBytes: options.holdoutBytes,
    rowBytes: DEFAULT_SEQUENCE_LENGTH,
    windowBytes: options.scoredBytes.windowBytes,
  });
  const { task, settings } = runTask({
    jobId: `scoring-${id}-run`,
    image: options.image,
    bundle,
    slices,
    budgets: { ...options.budgets, device: gpus > 0 ? "cuda" : "cpu" },
    nonce,
    resources: { timeoutSeconds: options.runTimeoutSeconds, ...(gpus > 0 ? { gpus } : {}) },
  });
  let result: Awaited<ReturnType<PipelineDeps["runner"]["run"]>>;
  try {
    result = await deps.runner.run(task, { signal });
  } catch (error) {
    throw infrastructureFromTask(error) ?? error;
  }
  // A run stopped by the watchdog is never scored from its output, whatever it printed first.
  if (result.timedOut) {
    return {
      status: "failed",
      error: missingReportError(result, deps.options),
      bpb: null,
      report: null,
    };
  }
  const parsed = parseRunReport(result.stdout, nonce, { truncated: result.stdoutTruncated });
  if (!parsed.ok) {
    // No report, or one that does not parse: the bundle's doing (killed for its memory, a crashed
    // interpreter, a scorer it starved). Only the scorer can write the report channel, and a
    // harness fault it catches is reported as stage `harness`, which is retried below.
    return {
      status: "failed",
      error:
        parsed.error.code === "report_malformed"
          ? `the run ended with an unreadable report: ${parsed.error.message}`
          : missingReportError(result, deps.options),
      bpb: null,
      report: null,
    };
  }
  const outcome = scoreRun(parsed.report, settings, {
    memorisationToleranceBpb: options.scoredBytes.memorisationToleranceBpb,
  });
  if (outcome.status === "infrastructure") {
    throw new InfrastructureError("harness_error", outcome.error);
  }
  return { ...outcome, report: parsed.report };
}

function missingReportError(
  result: { exitCode: number | null; timedOut: boolean; oomKilled: boolean },
  options: PipelineDeps["options"],
): string {
  if (result.timedOut) {
    return `the run exceeded its time limit of ${options.runTimeoutSeconds} s and was stopped`;
  }
  if (result.oomKilled) {
    return `the run exceeded its memory limit and was killed (budget ${options.budgets.memoryMb} MB)`;
  }
  return `the run ended without a report (exit code ${result.exitCode}): the bundle crashed the interpreter`;
}
