/**
 * One submission through the whole pipeline, as a job-queue handler. The stages, in order:
 *
 *   claim (pending -> running, fenced) -> bundle re-read from the database and re-checked
 *   -> duplicates (exact hash, near-copy) -> static gates and contract (gate.py, container)
 *   -> LLM review (unless LLM_GATE=off) -> scored run (run.py, container) -> score -> write
 *
 * Each refusal is a readable `error` and a status: `rejected` (a duplicate, a gate, the LLM's
 * deny, a model that looks ahead), `held` (the LLM review could not decide: never allowed, not
 * re-run by process-next; an operator releases it or it is rejected after 24 h), `failed` (the
 * bundle's run broke or scored nothing), `completed` (scored). Infrastructure failures (the
 * executor, the image, a GPU, the harness itself) never land on the miner: the submission goes
 * back to `pending` and the job is retried with backoff. A harness failure is retried
 * MAX_HARNESS_FAILURES times, then the bundle fails, so one bundle cannot occupy the workers
 * forever. Every write is fenced by the job's lease, so a bundle is scored exactly once.
 */
import { JobError, type JobHandler, LeaseLostError } from "@platform/challenge-sdk/jobs";
import type { EvalLevel } from "../api-schemas.js";
import { endLevel, startLevel } from "../eval-jobs.js";
import { duplicateMessage } from "../fingerprint-store.js";
import { claimSubmission, reopenBundle } from "./claim-submission.js";
import { duplicateStage } from "./duplicate-stage.js";
import { fenced } from "./fenced.js";
import { InfrastructureError } from "./infrastructure-error.js";
import { llmGateStage } from "./llm-gate-stage.js";
import type { PipelineDeps, ScoreJob, ScoreResult } from "./pipeline-context.js";
import { type FinalOutcome, recordOutcome, requeueSubmission } from "./record-outcome.js";
import { scoredRunStage } from "./scored-run-stage.js";
import { staticGateStage } from "./static-gate-stage.js";

/** Harness failures a bundle is retried for before it fails. */
export const MAX_HARNESS_FAILURES = 3;

/** The job handler that runs the pipeline with `deps`. */
export function scoringHandler(deps: PipelineDeps): JobHandler<ScoreJob, ScoreResult> {
  return (job, context) => processSubmission(deps, job.payload, context);
}

/** Take submission `payload.submissionId` through the pipeline. */
export async function processSubmission(
  deps: PipelineDeps,
  payload: ScoreJob,
  context: Parameters<JobHandler<ScoreJob, ScoreResult>>[1],
): Promise<ScoreResult> {
  const id = payload?.submissionId;
  if (typeof id !== "string" || !/^[1-9][0-9]{0,17}$/.test(id)) {
    throw new JobError(`the job carries no submission id (${JSON.stringify(id)})`, {
      retryable: false,
    });
  }
  const { sql, options } = deps;
  const claim = await claimSubmission(sql, id, context);
  if (claim.kind === "missing") {
    throw new JobError(`submission ${id} does not exist`, { retryable: false });
  }
  if (claim.kind === "settled") return { submission_id: id, status: "skipped" };
  const submission = claim.submission;
  const log = deps.log.child({ submission_id: id, hotkey: submission.hotkey });
  const audit: Record<string, unknown> = {};
  let llmGate: "required" | "off" | undefined;
  let level: EvalLevel = "gates";
  // Eval-job rows are written under the fence too: a worker that lost its job leaves no trace.
  const enter = async (next: EvalLevel) => {
    level = next;
    await fenced(sql, context, (tx) => startLevel(tx, id, next));
  };
  const leave = (done: EvalLevel) =>
    fenced(sql, context, (tx) => endLevel(tx, id, done, "completed"));

  const finish = async (at: EvalLevel, outcome: FinalOutcome): Promise<ScoreResult> => {
    const written = await recordOutcome(sql, context, id, outcome, {
      level: at,
      audit,
      ...(llmGate ? { llmGate } : {}),
    });
    if (!written) return { submission_id: id, status: "skipped" };
    log.info("submission evaluated", {
      status: outcome.status,
      ...(outcome.status === "completed"
        ? { final_score: outcome.finalScore, bpb: outcome.bpb }
        : { error: outcome.error }),
    });
    return { submission_id: id, status: outcome.status };
  };

  try {
    await enter("gates");
    const opened = await reopenBundle(submission);
    if (!opened.ok) {
      return finish("gates", { status: "rejected", error: opened.error.message, report: null });
    }
    const bundle = opened.value;
    const duplicate = await duplicateStage(sql, id, bundle);
    audit["duplicate"] = duplicate;
    if (duplicate) {
      return finish("gates", {
        status: "rejected",
        error: duplicateMessage(duplicate),
        report: null,
      });
    }
    const gate = await staticGateStage(deps, id, bundle, context.signal);
    audit["static"] = gate.report;
    if (!gate.ok) return finish("gates", { status: "rejected", error: gate.message, report: null });
    await leave("gates");

    await enter("llm");
    const review = await llmGateStage(deps, bundle, context.signal);
    llmGate = options.llm.mode;
    audit["llm"] = review.outcome === "off" ? { outcome: "off" } : review.audit;
    if (review.outcome === "deny") {
      return finish("llm", { status: "rejected", error: review.message, report: null });
    }
    if (review.outcome === "held") return finish("llm", { status: "held", error: review.message });
    await leave("llm");

    await enter("run");
    const run = await scoredRunStage(deps, submission, bundle, context.signal);
    if (run.status === "completed") {
      return finish("run", {
        status: "completed",
        finalScore: run.finalScore,
        antiCheatMultiplier: run.antiCheatMultiplier,
        bpb: run.bpb,
        note: run.note,
        report: run.report!,
      });
    }
    if (run.status === "rejected") {
      return finish("run", { status: "rejected", error: run.error, report: run.report });
    }
    return finish("run", { status: "failed", error: run.error, bpb: run.bpb, report: run.report });
  } catch (error) {
    // The lease is gone (another worker has the job) or the worker is stopping: write nothing.
    if (error instanceof LeaseLostError || context.signal.aborted) throw error;
    const infra =
      error instanceof InfrastructureError
        ? error
        : new InfrastructureError("internal_error", (error as Error)?.message ?? String(error), {
            cause: error,
          });
    const harness = infra.code === "harness_error";
    if (harness && submission.harnessFailures + 1 >= MAX_HARNESS_FAILURES) {
      log.error("the harness keeps failing on this bundle: failing it", { error: infra.message });
      return finish(level, {
        status: "failed",
        error: `the evaluation harness could not finish this bundle (${MAX_HARNESS_FAILURES} attempts): ${infra.message}`,
        bpb: null,
        report: null,
      });
    }
    log.warn("infrastructure failure: the submission goes back to the queue", {
      code: infra.code,
      error: infra.message,
      attempt: submission.harnessFailures,
    });
    try {
      await requeueSubmission(sql, context, id, harness);
    } catch (requeueError) {
      if (requeueError instanceof LeaseLostError) throw requeueError;
      // The job is retried anyway; the next claim sets the record right.
      log.error("could not mark the submission pending again", { error: requeueError });
    }
    throw infra;
  }
}
