/**
 * The eval plan v1: the immutable description of one external Eval run, issued once by
 * eval/prepare (issue-run.ts) and digested (sha256 of its RFC 8785 canonical JSON). The eval VM runs exactly
 * this plan; the result route scores against exactly this plan's tasks, trials and policy.
 */
import type { Static } from "@platform/challenge-sdk";
import type { EvalPlan as EvalPlanSchema } from "./eval-schemas.js";

export const EVAL_PLAN_SCHEMA_VERSION = "eval-plan/v1";

/** How trials become a score: the plan carries it, and its digest. */
export const SCORING_POLICY = {
  schema_version: "scoring-policy/v1",
  // A trial scores its checker's 0 or 1.
  trial_score: "checker",
  // A task scores the mean of its k trials, the job the mean over every task of the plan.
  task_score: "mean_of_trials",
  job_score: "mean_over_plan_tasks",
  // Weights count a run only when its result covers every task of the plan and passes one.
  requires_full_coverage: true,
  min_passed_tasks: 1,
} as const;

/** Trials of each task in a run. */
export const DEFAULT_TRIALS = 2;

/** The plan as issued, digested and served (its schema: EvalPlan in eval-schemas.ts). */
export type EvalPlan = Static<typeof EvalPlanSchema>;
