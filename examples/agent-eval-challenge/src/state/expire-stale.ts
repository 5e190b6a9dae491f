import { databaseNow, type TransactionSql } from "@platform/challenge-sdk";
import { ACTIVE_ASSIGNMENT_STATES } from "./assignment-states.js";
import { PRE_RESULT_EVAL_RUN_STATES } from "./eval-run-states.js";
import { transitionAssignment, transitionEvalRun } from "./transition.js";

/** What one `expireStale` call expired. */
export interface ExpiredRecords {
  assignments: string[];
  runs: string[];
}

/**
 * Lazy expiry, inside `tx`: every active assignment and every run without a result whose
 * expires_at has passed moves to `expired` through the ordinary transition (so the nonce is
 * revoked, the status event appended and the submission moved exactly as any other change).
 * Cheap when nothing is due (partial indexes on expires_at); call it at the start of every read
 * and write that looks at assignments or runs. Rows another transaction holds are skipped (it is
 * changing them; the next call sees the result). At most `limit` of each per call, so one read
 * never pays for a long backlog.
 */
export async function expireStale(
  tx: TransactionSql,
  now?: Date,
  limit = 100,
): Promise<ExpiredRecords> {
  const at = now ?? (await databaseNow(tx));
  const due = (table: string, states: readonly string[]) => tx<{ id: string }[]>`
    select id from ${tx(table)}
    where state in ${tx(states)} and expires_at <= ${at}
    order by expires_at, id
    limit ${limit}
    for update skip locked`;
  const expiry = { event: "expire", actor: "system", reasonCode: "ttl_elapsed", now: at } as const;
  const assignments = await due("review_assignments", ACTIVE_ASSIGNMENT_STATES);
  for (const { id } of assignments) await transitionAssignment(tx, { ...expiry, assignmentId: id });
  const runs = await due("eval_runs", PRE_RESULT_EVAL_RUN_STATES);
  for (const { id } of runs) await transitionEvalRun(tx, { ...expiry, runId: id });
  return { assignments: assignments.map((row) => row.id), runs: runs.map((row) => row.id) };
}
