/**
 * The pipeline's last write, under the job's fence: the status, the score or the reason, and
 * the audit trail (what each gate found, the run report as received). A submission that is no
 * longer pending or running (settled by another job) is left alone, so a bundle is scored once.
 *
 * Every outcome goes through here, and most of what it stores came from the bundle: an
 * exception's message in the report, names in a gate finding, a reviewer's answer about the code.
 * Every string of it is cleaned for PostgreSQL first (pgSafeText, pgSafeJson: NUL and lone
 * surrogates become U+FFFD), or a hostile message would make the write fail, and a failed write
 * looks like the platform failing: retried, with a container run each time (issue 31).
 */
import { pgSafeJson, pgSafeText, type Sql } from "@platform/challenge-sdk";
import type { JobContext } from "@platform/challenge-sdk/jobs";
import type { EvalLevel } from "../api-schemas.js";
import { endLevel, recordFailure, requeueLevels } from "../eval-jobs.js";
import type { RunReport } from "../harness-report.js";
import { fenced } from "./fenced.js";

/** Where a submission ends up. */
export type FinalOutcome =
  | {
      status: "completed";
      finalScore: number;
      antiCheatMultiplier: number;
      bpb: number;
      /** Why the multiplier is below 1 (shown as the record's `error`), or null. */
      note: string | null;
      report: RunReport;
    }
  | { status: "failed"; error: string; bpb: number | null; report: RunReport | null }
  | { status: "rejected"; error: string; report: RunReport | null }
  | { status: "held"; error: string };

/** What else the write records. */
export interface OutcomeExtras {
  /** The pipeline level that decided (its eval-job row ends in the same transaction). */
  level: EvalLevel;
  /** What the gates found, for the audit trail. */
  audit: Record<string, unknown>;
  /** The LLM gate mode the bundle went through, once it reached that stage. */
  llmGate?: "required" | "off";
  /** A failure of the platform that ends the level too (the one that made it give up). */
  platformFailure?: string;
}

/** Longest `error` a submission's record shows: a runaway exception message is cut here. */
export const MAX_ERROR_CHARS = 4000;

/** Write `outcome` for submission `id`; false when it was already settled. */
export async function recordOutcome(
  sql: Sql,
  job: Pick<JobContext, "fence">,
  id: string,
  outcome: FinalOutcome,
  extras: OutcomeExtras,
): Promise<boolean> {
  const error = storableError(outcome.status === "completed" ? outcome.note : outcome.error);
  const score = outcome.status === "completed" ? outcome.finalScore : null;
  const multiplier = outcome.status === "completed" ? outcome.antiCheatMultiplier : null;
  const bpb = outcome.status === "completed" || outcome.status === "failed" ? outcome.bpb : null;
  const report =
    outcome.status === "held" || outcome.report === null ? null : pgSafeJson(outcome.report);
  const scored = outcome.status === "completed" || outcome.status === "failed";
  return fenced(sql, job, async (tx) => {
    if (extras.platformFailure !== undefined) {
      await recordFailure(tx, id, extras.level, extras.platformFailure);
    }
    await endLevel(tx, id, extras.level, outcome.status === "held" ? "failed" : "completed");
    const rows = await tx`
      update submissions
      set status = ${outcome.status},
          error = ${error},
          final_score = ${score},
          anti_cheat_multiplier = ${multiplier},
          bpb = ${bpb},
          report = ${report === null ? null : tx.json(report as never)},
          gate = ${tx.json(pgSafeJson(extras.audit) as never)},
          llm_gate = coalesce(${extras.llmGate ?? null}, llm_gate),
          held_at = ${outcome.status === "held" ? tx`now()` : tx`held_at`},
          scored_at = ${scored ? tx`now()` : tx`scored_at`}
      where id = ${id}::bigint and status in ('pending', 'running')
      returning id`;
    return rows.length === 1;
  });
}

/**
 * The last resort when the outcome itself could not be written (whatever in it the database
 * refused): `failed` with `error` alone, the level ended with the failure counted. A bundle the
 * platform gave up on settles even then.
 */
export async function failPlainly(
  sql: Sql,
  job: Pick<JobContext, "fence">,
  id: string,
  level: EvalLevel,
  error: string,
): Promise<boolean> {
  return fenced(sql, job, async (tx) => {
    await recordFailure(tx, id, level, error);
    await endLevel(tx, id, level, "completed");
    const rows = await tx`
      update submissions set status = 'failed', error = ${pgSafeText(error)}, scored_at = now()
      where id = ${id}::bigint and status in ('pending', 'running')
      returning id`;
    return rows.length === 1;
  });
}

/** What a requeue records about the failure that caused it. */
export interface PlatformFailure {
  /** The level the pipeline was at. */
  level: EvalLevel;
  /** `code: sentence`, for the level's health row. */
  error: string;
  /** It happened while the bundle was being evaluated: counts toward MAX_PLATFORM_FAILURES. */
  counted: boolean;
}

/**
 * Send submission `id` back to the queue after an infrastructure failure: pending again, no
 * verdict written, its running eval-job level pending again with the failure counted on it.
 */
export async function requeueSubmission(
  sql: Sql,
  job: Pick<JobContext, "fence">,
  id: string,
  failure: PlatformFailure,
): Promise<void> {
  await fenced(sql, job, async (tx) => {
    await requeueLevels(tx, id);
    await recordFailure(tx, id, failure.level, failure.error);
    await tx`
      update submissions
      set status = 'pending',
          platform_failures = platform_failures + ${failure.counted ? 1 : 0}
      where id = ${id}::bigint and status = 'running'`;
  });
}

/** The record's `error`: cut at MAX_ERROR_CHARS, cleaned for PostgreSQL. */
function storableError(error: string | null): string | null {
  if (error === null) return null;
  return pgSafeText(
    error.length > MAX_ERROR_CHARS ? `${error.slice(0, MAX_ERROR_CHARS - 1)}…` : error,
  );
}
