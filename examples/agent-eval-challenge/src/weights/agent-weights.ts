/**
 * get_weights, rebuilt from the immutable eval results on every call, never from a mutable
 * column: a result counts when it verified and covers every task of its plan with at least one
 * passed task (a 2-of-8 partial run earns nothing). Per submission its latest accepted result
 * counts (after an owner revalidate the earlier one keeps counting until a new one is accepted,
 * and then the new one, whatever it earns). The rest is the SDK's `weightsFromScores`: per
 * hotkey its best submission, winner-take-all by default (ties: the earliest accepted, then the
 * lowest submission id); best_per_hotkey gives each hotkey its best score, normalised.
 */
import { type Sql, weightsFromScores } from "@platform/challenge-sdk";

/** The values of WEIGHTS_MODE: the settings schema and the weights both read this list. */
export const WEIGHTS_MODES = ["winner_take_all", "best_per_hotkey"] as const;
export type WeightsMode = (typeof WEIGHTS_MODES)[number];

export async function agentEvalWeights(
  sql: Sql,
  mode: WeightsMode,
): Promise<{ epoch: null; weights: Record<string, number> }> {
  // The latest accepted (verified) result of each submission, then only if it is complete: a
  // newer accepted result replaces an older one even when it earns nothing. Its score comes from
  // the immutable core; `at` and `id` are what weightsFromScores breaks ties with (it compares
  // ids as text: zero-padded, the lower submission id still wins).
  const rows = await sql<{ hotkey: string; score: number; at: Date; id: string }[]>`
    select hotkey, score, at, id from (
      select distinct on (e.submission_id)
        s.hotkey, (e.result_core ->> 'score')::float8 as score,
        e.verified_at as at, lpad(e.submission_id::text, 20, '0') as id, e.complete
      from eval_results e join submissions s on s.id = e.submission_id
      where e.verification ->> 'status' = 'verified'
      order by e.submission_id, e.verified_at desc, e.run_id
    ) latest
    where latest.complete`;
  return {
    epoch: null,
    weights: weightsFromScores(rows, { winnerTakesAll: mode === "winner_take_all" }),
  };
}
