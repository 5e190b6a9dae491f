import { pgSafeJson, pgSafeText, type Sql } from "@platform/challenge-sdk";
import type { Verdict } from "./verdict.js";

/** A decision stored for (code hash, rules revision). */
export interface CachedVerdict {
  outcome: "allow" | "deny";
  verdict: Verdict;
  model: string;
}

/** The stored decision for this bundle under these rules, or null. */
export async function cachedVerdict(
  sql: Sql,
  codeHash: string,
  rulesRevision: string,
): Promise<CachedVerdict | null> {
  const [row] = await sql<CachedVerdict[]>`
    select outcome, verdict, model from llm_verdicts
    where code_hash = ${codeHash} and rules_revision = ${rulesRevision}`;
  return row ?? null;
}

/**
 * Store a decision. Only allow and deny are ever stored: a held outcome is a failure to decide,
 * and must be asked again. The first stored decision stays (two workers racing agree anyway).
 * The verdict is the reviewer's text about the bundle, which the bundle can steer: cleaned of
 * what PostgreSQL refuses, or a NUL in its reason would fail every attempt to store it.
 */
export async function cacheVerdict(
  sql: Sql,
  codeHash: string,
  rulesRevision: string,
  decision: CachedVerdict,
): Promise<void> {
  await sql`
    insert into llm_verdicts (code_hash, rules_revision, outcome, verdict, model)
    values (${codeHash}, ${rulesRevision}, ${decision.outcome},
            ${sql.json(pgSafeJson(decision.verdict) as never)}, ${pgSafeText(decision.model)})
    on conflict (code_hash, rules_revision) do nothing`;
}
