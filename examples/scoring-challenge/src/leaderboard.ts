/**
 * The leaderboard of an epoch and the weights. Completed submissions of the epoch, one entry per
 * hotkey (its best), ordered by score on a 1e-9 grid (closer scores are a tie: below the
 * noise of any run), then by the earliest accepted, then by the smallest id. The weights are
 * the current epoch's entries, normalised in proportion to score (the spec's "best final_score
 * per hotkey, normalised"); a multiplier-0 cheat is listed with score 0 and gets no weight.
 */
import { type Sql, weightsFromScores } from "@platform/challenge-sdk";
import type { Leaderboard } from "./api-schemas.js";

/** Scores closer than this rank as equal. */
export const SCORE_GRID = 1e-9;

/** The leaderboard of epoch `epochId`. */
export async function leaderboard(sql: Sql, epochId: number): Promise<Leaderboard> {
  const rows = await sql<{ hotkey: string; submission_id: string; score: number }[]>`
    select hotkey, id::text as submission_id, final_score as score
    from (
      select distinct on (hotkey) id, hotkey, final_score, created_at
      from submissions
      where status = 'completed' and epoch_id = ${epochId} and final_score is not null
      order by hotkey, round(final_score / ${SCORE_GRID}) desc, created_at, id
    ) best
    order by round(final_score / ${SCORE_GRID}) desc, created_at, id`;
  return {
    epoch_id: epochId,
    entries: rows.map((row, index) => ({
      rank: index + 1,
      hotkey: row.hotkey,
      score: row.score,
      submission_id: row.submission_id,
    })),
  };
}

/** The weights of epoch `epochId`: each hotkey's best score, normalised; none scored -> {}. */
export async function epochWeights(
  sql: Sql,
  epochId: number,
): Promise<{ epoch: number; weights: Record<string, number> }> {
  const board = await leaderboard(sql, epochId);
  return {
    epoch: epochId,
    weights: weightsFromScores(
      board.entries.map((entry) => ({ hotkey: entry.hotkey, score: entry.score })),
    ),
  };
}
