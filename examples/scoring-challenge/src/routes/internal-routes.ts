/**
 * The internal routes (the challenge token; a cron or a worker may call them with the bearer
 * alone, as the spec says, and a slug header that is sent must name this challenge):
 *
 * - POST /internal/v1/worker/process-next: claim one pending submission and take it through the
 *   whole pipeline now; `{"submission_id": id}` or `{"submission_id": null}` when none is ready.
 *   When the executor cannot run it (no Docker engine, no broker, the image missing) it answers
 *   503 `executor_unavailable`: the submission is pending again, nothing is lost and nothing is
 *   scored by a fallback. Held bundles are never re-run here.
 * - POST /internal/v1/submissions/{id}/release: the operator's action on a `held` bundle (once a
 *   reviewer is configured, or after checking it by hand): back to `pending` with a new job, so
 *   it is reviewed again. It also requeues a pending submission whose job ran out of attempts
 *   (infrastructure kept failing). Anything else is 409 `not_releasable`.
 */
import { randomUUID } from "node:crypto";
import { type ChallengeRouter, HttpError } from "@platform/challenge-sdk";
import { processNext } from "@platform/challenge-sdk/jobs";
import { ProcessNextResult, SubmissionIdParams, SubmissionStatus } from "../api-schemas.js";
import { InfrastructureError } from "../pipeline/infrastructure-error.js";
import { SCORE_MAX_ATTEMPTS } from "../pipeline/pipeline-context.js";
import { processSubmission } from "../pipeline/process-submission.js";
import { type ScoringState, workerEvents } from "../scoring-state.js";
import type { Settings } from "../settings.js";
import { expireHeld, readSubmission } from "../submission-store.js";

/** Register the internal routes (get_weights is the SDK's). */
export function internalRoutes(router: ChallengeRouter<Settings, ScoringState>): void {
  router.internal({
    method: "POST",
    path: "/internal/v1/worker/process-next",
    slugHeader: "if-sent",
    summary: "Process one pending submission through the whole pipeline now",
    tags: ["worker"],
    responses: {
      200: { description: "The submission processed, or null", schema: ProcessNextResult },
    },
    handler: async ({ sql, state, log }) => {
      await expireHeld(sql);
      let infrastructure: InfrastructureError | undefined;
      const done = await processNext(
        state.queue,
        async (job, context) => {
          try {
            return await processSubmission(state.pipeline, job.payload, context);
          } catch (error) {
            if (error instanceof InfrastructureError) infrastructure = error;
            throw error;
          }
        },
        { onEvent: workerEvents(log) },
      );
      if (!done) return { submission_id: null };
      const id = done.job.payload.submissionId;
      if (infrastructure) {
        throw new HttpError(
          503,
          infrastructure.code,
          `submission ${id} could not be evaluated and is pending again: ${infrastructure.message}`,
        );
      }
      return { submission_id: id };
    },
  });

  router.internal({
    method: "POST",
    path: "/internal/v1/submissions/:submission_id/release",
    slugHeader: "if-sent",
    summary: "Operator: send a held submission (or one whose job gave up) back to the queue",
    tags: ["worker"],
    params: SubmissionIdParams,
    responses: { 200: { description: "The submission, pending again", schema: SubmissionStatus } },
    handler: async ({ sql, state, params, log }) => {
      const id = params.submission_id;
      await expireHeld(sql);
      const [current] = await sql<{ status: string; job_id: string | null }[]>`
        select status, job_id from submissions where id = ${id}::bigint`;
      if (!current) throw new HttpError(404, "submission_not_found", `no submission ${id}`);
      // A pending or running submission is released only when its job is gone for good.
      const job = current.job_id ? await state.queue.get(current.job_id) : null;
      const jobGaveUp = job === null || job.status === "dead" || job.status === "cancelled";
      const released = await sql.begin(async (tx) => {
        const [row] = await tx<{ status: string }[]>`
          select status from submissions where id = ${id}::bigint for update`;
        const releasable =
          row?.status === "held" ||
          ((row?.status === "pending" || row?.status === "running") && jobGaveUp);
        if (!releasable) return false;
        await tx`update submissions set status = 'pending', held_at = null, error = null
                 where id = ${id}::bigint`;
        const next = await state.queue.enqueue(
          { submissionId: id },
          { key: `score:${id}:release:${randomUUID()}`, maxAttempts: SCORE_MAX_ATTEMPTS, tx },
        );
        await tx`update submissions set job_id = ${next.id} where id = ${id}::bigint`;
        return true;
      });
      if (!released) {
        throw new HttpError(
          409,
          "not_releasable",
          `submission ${id} is ${current.status}: only a held submission, or a pending one whose job gave up, can be released`,
        );
      }
      log.warn("submission released by the operator", { submission_id: id, was: current.status });
      return (await readSubmission(sql, id))!;
    },
  });
}
