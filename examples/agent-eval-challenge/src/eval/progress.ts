/**
 * POST /evaluation/v1/runs/{id}/progress (rules 14, 15): one task.status or task.progress event
 * of a running run, behind the run token and a telemetry session. Each task's events carry
 * increasing sequence numbers: an identical repeat is recorded once (200, `duplicate`), the same
 * number with another body is 409 seq_conflict, a number not above the task's latest is 409
 * seq_not_increasing. Events feed the live views only: nothing here reads or writes a score
 * (the result route is the only path to one).
 */
import { HttpError, type Sql, type Static, type TransactionSql } from "@platform/challenge-sdk";
import { canonicalJson } from "../crypto/index.js";
import { openMinerEnv } from "../env/miner-env.js";
import { envSpellings, redactSecrets } from "../live/redaction.js";
import { reviewTransaction } from "../review/index.js";
import type { ProgressEvent, ProgressResponse } from "./eval-vm-schemas.js";
import { type AuthorizedRun, lockRun } from "./run-bearer.js";
import { runNotRunning } from "./telemetry-session.js";

export type ProgressEventRecord = Static<typeof ProgressEvent>;

/** The progress route's body limit: one event. */
export const MAX_PROGRESS_BYTES = 16 * 1024;

export const PROGRESS_ERROR_CODES = {
  /** 409: the task is not one of the run's plan. */
  unknownTask: "unknown_task",
  /** 409: the trial is beyond the plan's k trials. */
  unknownTrial: "unknown_trial",
  /** 409: this task already has an event with this seq, and another body. */
  seqConflict: "seq_conflict",
  /** 409: the seq is not above the task's latest. */
  seqNotIncreasing: "seq_not_increasing",
} as const;

export type ProgressAnswer = Static<typeof ProgressResponse>;

/** 409 unknown_task / unknown_trial unless the run's plan has this task and (given) trial. */
export function requirePlanned(
  run: Pick<AuthorizedRun, "id" | "plan">,
  taskId: string,
  trial?: number,
) {
  if (!run.plan.task_set.task_ids.includes(taskId)) {
    throw new HttpError(
      409,
      PROGRESS_ERROR_CODES.unknownTask,
      `Task ${taskId} is not in the plan of eval run ${run.id}.`,
    );
  }
  if (trial !== undefined && trial > run.plan.trials) {
    throw new HttpError(
      409,
      PROGRESS_ERROR_CODES.unknownTrial,
      `The plan of eval run ${run.id} has ${run.plan.trials} trials a task.`,
      { extra: { trials: run.plan.trials } },
    );
  }
}

export async function recordProgress(
  sql: Sql,
  input: { runId: string; event: ProgressEventRecord; secretKey: Buffer },
): Promise<ProgressAnswer> {
  const { event } = input;
  return reviewTransaction(sql, undefined, async (tx) => {
    const run = await lockRun(tx, input.runId);
    if (run.state !== "running") throw runNotRunning(run, "progress ended with its result.");
    requirePlanned(run, event.task_id, event.type === "task.status" ? event.trial : undefined);
    const answer = { run_id: run.id, task_id: event.task_id, seq: event.seq };
    // The message is public on the live views: redacted before it is stored, the miner's env
    // values included (the views redact the shapes again when they read, but know no env).
    const stored = await redactedEvent(tx, event, run.submission_id, input.secretKey);
    const payload = canonicalJson(stored);
    // The run row is locked (lockRun): a task's events are judged one at a time.
    const [latest] = await tx<{ max_seq: number | null; same: string | null }[]>`
      select max(seq) as max_seq,
        (select payload::text from eval_task_events
          where run_id = ${run.id} and task_id = ${event.task_id} and seq = ${event.seq}) as same
      from eval_task_events where run_id = ${run.id} and task_id = ${event.task_id}
        and seq is not null`;
    if (latest?.same != null) {
      if (canonicalJson(JSON.parse(latest.same)) === payload) {
        return { ...answer, recorded: false, duplicate: true };
      }
      throw new HttpError(
        409,
        PROGRESS_ERROR_CODES.seqConflict,
        `Task ${event.task_id} already has event ${event.seq} with another body.`,
      );
    }
    if (latest?.max_seq != null && event.seq <= latest.max_seq) {
      throw new HttpError(
        409,
        PROGRESS_ERROR_CODES.seqNotIncreasing,
        `Task ${event.task_id}'s events must increase: the latest is ${latest.max_seq}.`,
        { extra: { latest_seq: latest.max_seq } },
      );
    }
    await tx`
      insert into eval_task_events (submission_id, run_id, task_id, kind, seq, payload, bytes)
      values (${run.submission_id}, ${run.id}, ${event.task_id}, ${event.type}, ${event.seq},
        ${tx.json(stored as never)}, ${Buffer.byteLength(payload)})`;
    return { ...answer, recorded: true, duplicate: false };
  });
}

async function redactedEvent(
  tx: TransactionSql,
  event: ProgressEventRecord,
  submissionId: string,
  secretKey: Buffer,
): Promise<ProgressEventRecord> {
  if (event.message === undefined) return event;
  const env = (await openMinerEnv(tx, submissionId, secretKey)) ?? {};
  const message = redactSecrets(event.message, { exact: envSpellings(Object.values(env)) });
  return message === event.message ? event : { ...event, message };
}
