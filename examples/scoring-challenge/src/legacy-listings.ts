/**
 * The legacy listings, derived from what was submitted (production kept them for clients that
 * still read them): an architecture family is a distinct architecture.py (by sha256), a
 * training variant a distinct training.py used with it. Rejected and held bundles are not
 * listed: a refused cheat is no one's family. Newest first.
 */
import type { Sql } from "@platform/challenge-sdk";

/** Listing limits. */
export const LISTING_LIMIT = { default: 50, max: 200 } as const;

/** GET /v1/architectures. */
export function architectureFamilies(sql: Sql, limit: number) {
  return sql<
    {
      architecture_id: string;
      first_submission_id: string;
      first_hotkey: string;
      submissions: number;
      variants: number;
      best_score: number | null;
      created_at: Date;
    }[]
  >`
    select architecture_hash as architecture_id,
           (array_agg(id::text order by id))[1] as first_submission_id,
           (array_agg(hotkey order by id))[1] as first_hotkey,
           count(*)::int as submissions,
           count(distinct training_hash)::int as variants,
           max(final_score) filter (where status = 'completed') as best_score,
           min(created_at) as created_at
    from submissions
    where architecture_hash is not null and status not in ('rejected', 'held')
    group by architecture_hash
    order by min(id) desc
    limit ${limit}`;
}

/** GET /v1/training-variants, of one family or of all. */
export function trainingVariants(sql: Sql, architectureId: string | null, limit: number) {
  return sql<
    {
      variant_id: string;
      architecture_id: string;
      first_submission_id: string;
      first_hotkey: string;
      submissions: number;
      best_score: number | null;
      created_at: Date;
    }[]
  >`
    select training_hash as variant_id,
           architecture_hash as architecture_id,
           (array_agg(id::text order by id))[1] as first_submission_id,
           (array_agg(hotkey order by id))[1] as first_hotkey,
           count(*)::int as submissions,
           max(final_score) filter (where status = 'completed') as best_score,
           min(created_at) as created_at
    from submissions
    where architecture_hash is not null and training_hash is not null
      and status not in ('rejected', 'held')
      and (${architectureId}::text is null or architecture_hash = ${architectureId}::text)
    group by architecture_hash, training_hash
    order by min(id) desc
    limit ${limit}`;
}
