/**
 * POST /owner/submissions/{id}/revalidate (rule 23): the challenge owner (OWNER_HOTKEY, nobody
 * else) forces a new evaluation of a submission's immutable artifact. It records a pending
 * request; the miner's next eval/prepare issues the new run and its token (the token belongs in
 * the miner's eval VM, never with the owner). Until that run's result is accepted, the earlier
 * accepted result keeps counting for weights (weights read the latest verified result).
 * Refused while a run is in progress (409 run_in_progress) or before any run (409
 * nothing_to_revalidate: eval/prepare is the way in); a repeat answers the pending request.
 */
import { HttpError, type Sql, type Static, type TransactionSql } from "@platform/challenge-sdk";
import { mintId } from "../crypto/index.js";
import { reviewTransaction } from "../review/index.js";
import { ACTIVE_EVAL_RUN_STATES, type EvalRunState, notFound } from "../state/index.js";
import type { EvalRevalidateResponse } from "./eval-schemas.js";

export const REVALIDATE_ERROR_CODES = {
  /** 403: the signed hotkey is not OWNER_HOTKEY (or no owner is configured). */
  notOwner: "not_owner",
  /** 404: no such submission. */
  submissionNotFound: "submission_not_found",
  /** 409: the submission has no eval run yet. */
  nothingToRevalidate: "nothing_to_revalidate",
  /** 409: the current run is still prepared, running or verifying. */
  runInProgress: "run_in_progress",
} as const;

/** The pending request; its previous_run_id is the run the next eval/prepare follows. */
export type RevalidationAnswer = Static<typeof EvalRevalidateResponse>;

interface PendingRow {
  id: string;
  requested_at: Date;
}

/** The submission's pending revalidation, if any. */
export async function pendingRevalidation(
  tx: TransactionSql,
  submissionId: string,
): Promise<PendingRow | null> {
  const [row] = await tx<PendingRow[]>`
    select id, requested_at from eval_revalidations
    where submission_id = ${submissionId} and consumed_run_id is null`;
  return row ?? null;
}

/** Marks the pending revalidation as spent on `runId`. */
export async function consumeRevalidation(
  tx: TransactionSql,
  revalidationId: string,
  runId: string,
): Promise<void> {
  await tx`
    update eval_revalidations set consumed_run_id = ${runId}, consumed_at = now()
    where id = ${revalidationId} and consumed_run_id is null`;
}

export function requestRevalidation(
  sql: Sql,
  input: { submissionId: string; hotkey: string; ownerHotkey: string | null },
): Promise<RevalidationAnswer> {
  if (input.ownerHotkey === null || input.hotkey !== input.ownerHotkey) {
    throw new HttpError(
      403,
      REVALIDATE_ERROR_CODES.notOwner,
      input.ownerHotkey === null
        ? "No OWNER_HOTKEY is configured: nobody may revalidate."
        : "Only the challenge owner's hotkey may revalidate.",
    );
  }
  return reviewTransaction(sql, undefined, async (tx) => {
    const [submission] = await tx<
      { id: string; run_id: string | null; run_state: EvalRunState | null }[]
    >`
      select s.id, r.id as run_id, r.state as run_state
      from submissions s left join eval_runs r on r.id = s.current_eval_run_id
      where s.id = ${input.submissionId}
      for update of s`;
    if (!submission) {
      throw notFound(REVALIDATE_ERROR_CODES.submissionNotFound, `Submission ${input.submissionId}`);
    }
    if (submission.run_id === null || submission.run_state === null) {
      throw new HttpError(
        409,
        REVALIDATE_ERROR_CODES.nothingToRevalidate,
        `Submission ${submission.id} has no eval run: eval/prepare starts the first.`,
      );
    }
    if ((ACTIVE_EVAL_RUN_STATES as readonly string[]).includes(submission.run_state)) {
      throw new HttpError(
        409,
        REVALIDATE_ERROR_CODES.runInProgress,
        `Eval run ${submission.run_id} is ${submission.run_state}; revalidate after it ends.`,
      );
    }
    const pending =
      (await pendingRevalidation(tx, submission.id)) ??
      (
        await tx<PendingRow[]>`
          insert into eval_revalidations (id, submission_id, requested_by)
          values (${mintId()}, ${submission.id}, ${input.hotkey})
          returning id, requested_at`
      )[0]!;
    return {
      submission_id: Number(submission.id),
      revalidation_id: pending.id,
      requested_at: pending.requested_at.toISOString(),
      previous_run_id: submission.run_id,
      state: "pending" as const,
    };
  });
}
