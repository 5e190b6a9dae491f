/**
 * GET /submissions/{id}/eval/status: the submission's runs, newest first, paged with signed
 * cursors (at most 512 characters: the spec's limit, a 422 beyond), 1-16 a page. The owner only.
 */
import type { Sql } from "@platform/challenge-sdk";
import { deriveKey, encodeCursor, KeyLabel } from "../crypto/index.js";
import { pagePosition } from "../paging.js";
import { lockOwnedSubmission, reviewTransaction } from "../review/index.js";
import type { EvalRunState } from "../state/index.js";

interface RunRow {
  id: string;
  run_number: number;
  review_assignment_id: string;
  state: EvalRunState;
  plan_sha256: string;
  issued_at: Date;
  expires_at: Date;
  started_at: Date | null;
  result_received_at: Date | null;
  accepted_at: Date | null;
  score: number | null;
  failure_code: string | null;
}

const iso = (value: Date | null) => (value === null ? null : value.toISOString());

/** eval/status pages: this many runs unless the request asks for fewer or more, at most the max. */
export const EVAL_STATUS_DEFAULT_LIMIT = 10;
export const EVAL_STATUS_MAX_LIMIT = 16;

export function evalStatus(
  sql: Sql,
  request: {
    submissionId: string;
    hotkey: string;
    cursor?: string;
    limit?: number;
    secretKey: Buffer;
  },
) {
  return reviewTransaction(sql, undefined, async (tx) => {
    const submission = await lockOwnedSubmission(tx, request.submissionId, request.hotkey);
    const key = deriveKey(request.secretKey, KeyLabel.cursor);
    const scope = `eval-status:${submission.id}`;
    const before = pagePosition(key, scope, request.cursor);
    const limit = request.limit ?? EVAL_STATUS_DEFAULT_LIMIT;
    const rows = await tx<RunRow[]>`
      select id, run_number, review_assignment_id, state, plan_sha256, issued_at, expires_at,
        started_at, result_received_at, accepted_at, score, failure_code
      from eval_runs
      where submission_id = ${submission.id}
        and (${before}::int is null or run_number < ${before}::int)
      order by run_number desc
      limit ${limit + 1}`;
    const shown = rows.slice(0, limit);
    const [current] = await tx<{ current_eval_run_id: string | null }[]>`
      select current_eval_run_id from submissions where id = ${submission.id}`;
    return {
      submission_id: Number(submission.id),
      current_run_id: current?.current_eval_run_id ?? null,
      items: shown.map((row) => ({
        run_id: row.id,
        run_number: row.run_number,
        review_assignment_id: row.review_assignment_id,
        state: row.state,
        plan_digest: row.plan_sha256,
        issued_at: row.issued_at.toISOString(),
        expires_at: row.expires_at.toISOString(),
        started_at: iso(row.started_at),
        result_received_at: iso(row.result_received_at),
        accepted_at: iso(row.accepted_at),
        score: row.score,
        failure_code: row.failure_code,
      })),
      next_cursor: rows.length > limit ? encodeCursor(key, scope, shown.at(-1)!.run_number) : null,
    };
  });
}
