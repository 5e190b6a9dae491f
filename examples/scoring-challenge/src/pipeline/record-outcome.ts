/**
 * The pipeline's last write, under the job's fence: the status, the score or the reason, and
 * the audit trail (what each gate found, the run report as received). A submission that is no
 * longer pending or running (settled by another job) is left alone, so a bundle is scored once.
 */
import type { Sql } from "@platform/challenge-sdk";
import type { JobContext } from "@platform/challenge-sdk/jobs";
import type { EvalLevel } from "../api-schemas.js";
import { endLevel, requeueLevels } from "../eval-jobs.js";
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
}

/** Write `outcome` for submission `id`; false when it was already settled. */
export async function recordOutcome(
  sql: Sql,
  job: Pick<JobContext, "fence">,
  id: string,
  outcome: FinalOutcome,
  extras: OutcomeExtras,
): Promise<boolean> {
  const error = outcome.status === "completed" ? outcome.note : outcome.error;
  const score = outcome.status === "completed" ? outcome.finalScore : null;
  const multiplier = outcome.status === "completed" ? outcome.antiCheatMultiplier : null;
  const bpb = outcome.status === "completed" || outcome.status === "failed" ? outcome.bpb : null;
  const report = outcome.status === "held" ? null : outcome.report;
  const scored = outcome.status === "completed" || outcome.status === "failed";
  return fenced(sql, job, async (tx) => {
    await endLevel(tx, id, extras.level, outcome.status === "held" ? "failed" : "completed");
    const rows = await tx`
      update submissions
      set status = ${outcome.status},
          error = ${error},
          final_score = ${score},
          anti_cheat_multiplier = ${multiplier},
          bpb = ${bpb},
          report = ${report === null ? null : tx.json(report as never)},
          gate = ${tx.json(extras.audit as never)},
          llm_gate = coalesce(${extras.llmGate ?? null}, llm_gate),
          held_at = ${outcome.status === "held" ? tx`now()` : tx`held_at`},
          scored_at = ${scored ? tx`now()` : tx`scored_at`}
      where id = ${id}::bigint and status in ('pending', 'running')
      returning id`;
    return rows.length === 1;
  });
}

/**
 * Send submission `id` back to the queue after an infrastructure failure: pending again, no
 * verdict written, its running eval-job level pending again. `harnessFailure` counts a failure of the harness itself (bounded elsewhere).
 */
export async function requeueSubmission(
  sql: Sql,
  job: Pick<JobContext, "fence">,
  id: string,
  harnessFailure: boolean,
): Promise<void> {
  await fenced(sql, job, async (tx) => {
    await requeueLevels(tx, id);
    await tx`
      update submissions
      set status = 'pending',
          harness_failures = harness_failures + ${harnessFailure ? 1 : 0}
      where id = ${id}::bigint and status = 'running'`;
  });
}
