/**
 * get_weights, rebuilt from the immutable eval results on every call, never from a mutable
 * column: a result counts when it verified and covers every task of its plan with at least one
 * passed task (a 2-of-8 partial run earns nothing). Per submission its latest accepted result
 * counts (after an owner revalidate the earlier one keeps counting until a new one is accepted,
 * and then the new one, whatever it earns); per hotkey its best submission. Winner-take-all by default (ties: the earliest accepted, then the
 * lowest submission id); best_per_hotkey gives each hotkey its best score (the SDK normalises).
 */
import type { Sql } from "@platform/challenge-sdk";

export type WeightsMode = "winner_take_all" | "best_per_hotkey";

interface Candidate {
  hotkey: string;
  submission_id: string;
  score: number;
  accepted_at: Date;
}

export async function agentEvalWeights(
  sql: Sql,
  mode: WeightsMode,
): Promise<{ epoch: null; weights: Record<string, number> }> {
  // The latest accepted (verified) result of each submission, then only if it is complete: a
  // newer accepted result replaces an older one even when it earns nothing. Its score comes from
  // the immutable core.
  const rows = await sql<(Candidate & { complete: boolean })[]>`
    select * from (
      select distinct on (e.submission_id)
        s.hotkey, e.submission_id, (e.result_core ->> 'score')::float8 as score,
        e.verified_at as accepted_at, e.complete
      from eval_results e join submissions s on s.id = e.submission_id
      where e.verification ->> 'status' = 'verified'
      order by e.submission_id, e.verified_at desc, e.run_id
    ) latest
    where latest.complete`;
  const best = new Map<string, Candidate>();
  for (const row of rows) {
    const held = best.get(row.hotkey);
    if (!held || beats(row, held)) best.set(row.hotkey, row);
  }
  const candidates = [...best.values()].filter((candidate) => candidate.score > 0);
  if (candidates.length === 0) return { epoch: null, weights: {} };
  if (mode === "best_per_hotkey") {
    return {
      epoch: null,
      weights: Object.fromEntries(
        candidates.map((candidate) => [candidate.hotkey, candidate.score]),
      ),
    };
  }
  const winner = candidates.reduce((a, b) => (beats(b, a) ? b : a));
  return { epoch: null, weights: { [winner.hotkey]: 1 } };
}

/** Higher score; then the earlier accepted; then the lower submission id. */
function beats(a: Candidate, b: Candidate): boolean {
  if (a.score !== b.score) return a.score > b.score;
  if (a.accepted_at.getTime() !== b.accepted_at.getTime()) {
    return a.accepted_at.getTime() < b.accepted_at.getTime();
  }
  return BigInt(a.submission_id) < BigInt(b.submission_id);
}
