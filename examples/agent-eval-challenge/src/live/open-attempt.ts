/**
 * POST /evaluation/v1/runs/{id}/attempts: the eval worker opens one trial of one plan task of a
 * running run (behind the run token and a telemetry session) and gets the attempt's own bearer
 * for its log stream. One attempt per (run, task, trial): opening it again answers the same
 * attempt and the same token (200), so a worker that lost the first answer (201) can go on.
 */
import type { Sql, Static } from "@platform/challenge-sdk";
import { capabilityToken, mintId } from "../crypto/index.js";
import { PROGRESS_ERROR_CODES, requirePlanned } from "../eval/progress.js";
import { lockRun } from "../eval/run-bearer.js";
import { runNotRunning, TELEMETRY_ERROR_CODES } from "../eval/telemetry-session.js";
import { reviewTransaction } from "../review/index.js";
import { attemptEventsPath } from "./attempt-bearer.js";
import type { AttemptOpenResponse } from "./live-schemas.js";

export const ATTEMPT_ERROR_CODES = {
  /** 409: the run is not running (no telemetry session opened yet, or it has its result). */
  runNotRunning: TELEMETRY_ERROR_CODES.runNotRunning,
  /** 409: the task is not one of the run's plan. */
  unknownTask: PROGRESS_ERROR_CODES.unknownTask,
  /** 409: the trial is beyond the plan's k trials. */
  unknownTrial: PROGRESS_ERROR_CODES.unknownTrial,
} as const;

/** An attempt's own capability: where its container output goes, and with which token. */
export type OpenedAttempt = Static<typeof AttemptOpenResponse>;

export async function openAttempt(
  sql: Sql,
  input: {
    runId: string;
    taskId: string;
    trial: number;
    secretKey: Buffer;
    slug: string;
  },
): Promise<{ status: 200 | 201; attempt: OpenedAttempt }> {
  return reviewTransaction(sql, undefined, async (tx) => {
    // The run row is locked: two opens of one trial are judged one after the other.
    const run = await lockRun(tx, input.runId);
    if (run.state !== "running") throw runNotRunning(run, "attempts are opened while it runs.");
    requirePlanned(run, input.taskId, input.trial);
    const answer = (attemptId: string): OpenedAttempt => ({
      attempt_id: attemptId,
      token: capabilityToken(input.secretKey, "evalAttempt", attemptId).token,
      events_path: attemptEventsPath(attemptId),
      challenge_slug: input.slug,
    });
    const [existing] = await tx<{ id: string }[]>`
      select id from eval_attempts
      where run_id = ${run.id} and task_id = ${input.taskId} and trial = ${input.trial}`;
    if (existing) return { status: 200, attempt: answer(existing.id) };
    const attemptId = mintId();
    await tx`
      insert into eval_attempts (id, run_id, submission_id, task_id, trial, token_sha256)
      values (${attemptId}, ${run.id}, ${run.submission_id}, ${input.taskId}, ${input.trial},
        ${capabilityToken(input.secretKey, "evalAttempt", attemptId).hash})`;
    return { status: 201, attempt: answer(attemptId) };
  });
}
