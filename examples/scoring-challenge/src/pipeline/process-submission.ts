/**
 * One submission through the whole pipeline, as a job-queue handler. The stages, in order:
 *
 *   claim (pending -> running, fenced) -> bundle re-read from the database and re-checked
 *   -> static gates and contract (gate.py, container) -> duplicates (exact hash, near-copy)
 *   -> LLM review (unless LLM_GATE=off) -> scored run (run.py, container) -> score
 *   -> behavioural copy check (the run's loss curve against earlier accepted runs) -> write
 *
 * The gate's verdict comes before the duplicate check, so a near-copy that breaks the gate is
 * refused for what it breaks; an exact copy of an earlier bundle that passed the gate is refused
 * at once, without the gate's container run (duplicate-stage.ts says why nothing is lost).
 *
 * Each refusal is a readable `error` and a status: `rejected` (a gate, a duplicate by code or by
 * behaviour, the LLM's deny, a model that looks ahead), `held` (the LLM review could not decide: never allowed, not
 * re-run by process-next; an operator releases it or it is rejected after 24 h), `failed` (the
 * bundle's run broke or scored nothing, or the platform gave up on it), `completed` (scored).
 * Infrastructure failures never land on the miner at first: the submission goes back to
 * `pending`, the level's health row counts the failure and keeps its sentence, and the job is
 * retried with backoff. A failure while the bundle was being evaluated (the harness, the
 * database, a bug) is retried MAX_PLATFORM_FAILURES - 1 times, then the bundle fails with a
 * sentence saying the platform could not evaluate it: each retry runs the bundle again, so no
 * bundle can make the service loop. Every write is fenced by the job's lease, so a bundle is
 * scored exactly once.
 */
import { JobError, type JobHandler, LeaseLostError } from "@platform/challenge-sdk/jobs";
import type { EvalLevel } from "../api-schemas.js";
import { endLevel, startLevel } from "../eval-jobs.js";
import { type DuplicateMatch, duplicateMessage } from "../fingerprint-store.js";
import { behaviourMessage, behaviourStage } from "./behaviour-stage.js";
import { claimSubmission, reopenBundle } from "./claim-submission.js";
import { duplicateStage, gatedExactDuplicate } from "./duplicate-stage.js";
import { fenced } from "./fenced.js";
import { evaluationFailed, InfrastructureError } from "./infrastructure-error.js";
import { llmGateStage } from "./llm-gate-stage.js";
import {
  MAX_PLATFORM_FAILURES,
  type PipelineDeps,
  type ScoreJob,
  type ScoreResult,
} from "./pipeline-context.js";
import {
  type FinalOutcome,
  failPlainly,
  recordOutcome,
  requeueSubmission,
} from "./record-outcome.js";
import { scoredRunStage } from "./scored-run-stage.js";
import { staticGateStage } from "./static-gate-stage.js";

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

  const refuseDuplicate = (match: DuplicateMatch) => {
    audit["duplicate"] = match;
    return finish("gates", { status: "rejected", error: duplicateMessage(match), report: null });
  };

  // Every stage, as one function: `return await` below, so a refused write of the outcome is
  // caught here like any other failure (a bare `return finish(...)` in a try escapes its catch).
  const stages = async (): Promise<ScoreResult> => {
    await enter("gates");
    const opened = await reopenBundle(submission);
    if (!opened.ok) {
      return finish("gates", { status: "rejected", error: opened.error.message, report: null });
    }
    const bundle = opened.value;
    const copy = await gatedExactDuplicate(sql, id, bundle.codeHash);
    if (copy) return refuseDuplicate(copy);
    const gate = await staticGateStage(deps, id, bundle, context.signal);
    audit["static"] = gate.report;
    if (!gate.ok) return finish("gates", { status: "rejected", error: gate.message, report: null });
    const duplicate = await duplicateStage(sql, id, bundle);
    if (duplicate) return refuseDuplicate(duplicate);
    audit["duplicate"] = null;
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
      // A run that computes what an earlier accepted bundle computes is a copy of it.
      const copy = await behaviourStage(sql, id, run.report!);
      audit["behaviour"] = copy;
      if (copy) {
        return finish("run", {
          status: "rejected",
          error: behaviourMessage(copy),
          report: run.report,
        });
      }
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
  };

  try {
    return await stages();
  } catch (error) {
    // The lease is gone (another worker has the job) or the worker is stopping: write nothing.
    if (error instanceof LeaseLostError || context.signal.aborted) throw error;
    const infra =
      error instanceof InfrastructureError
        ? error
        : new InfrastructureError("internal_error", (error as Error)?.message ?? String(error), {
            cause: error,
          });
    const counted = evaluationFailed(infra);
    const failures = submission.platformFailures + (counted ? 1 : 0);
    const sentence = `${infra.code}: ${infra.message}`;
    if (counted && failures >= MAX_PLATFORM_FAILURES) {
      log.error("the platform keeps failing on this bundle: failing it", { error: sentence });
      return giveUp(level, failures, sentence);
    }
    log.warn("infrastructure failure: the submission goes back to the queue", {
      code: infra.code,
      error: infra.message,
      platform_failures: failures,
    });
    try {
      await requeueSubmission(sql, context, id, { level, error: sentence, counted });
    } catch (requeueError) {
      if (requeueError instanceof LeaseLostError) throw requeueError;
      // The job is retried anyway; the next claim sets the record right.
      log.error("could not mark the submission pending again", { error: requeueError });
    }
    throw infra;
  }

  /**
   * Fail the bundle after MAX_PLATFORM_FAILURES failures of the platform: not a verdict on it, and
   * the same bundle may be submitted again (failed bundles are nobody's original). If even that
   * write is refused, a plain one with a fixed sentence settles it.
   */
  async function giveUp(at: EvalLevel, failures: number, last: string): Promise<ScoreResult> {
    const error =
      `the platform could not evaluate this bundle: ${failures} attempts failed on the ` +
      `platform's side (the last: ${last}); this is not a verdict on the bundle, submit it again`;
    const outcome = { status: "failed", error, bpb: null, report: null } as const;
    try {
      const written = await recordOutcome(sql, context, id, outcome, {
        level: at,
        audit,
        ...(llmGate ? { llmGate } : {}),
        platformFailure: last,
      });
      return { submission_id: id, status: written ? "failed" : "skipped" };
    } catch (writeError) {
      if (writeError instanceof LeaseLostError) throw writeError;
      log.error("could not write the outcome: failing the bundle plainly", { error: writeError });
      const plain = `the platform could not evaluate this bundle: ${failures} attempts failed on the platform's side; this is not a verdict on the bundle, submit it again`;
      const written = await failPlainly(sql, context, id, at, plain);
      return { submission_id: id, status: written ? "failed" : "skipped" };
    }
  }
}
