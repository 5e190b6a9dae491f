/**
 * The eval plan v1: the immutable description of one external Eval run, issued once by
 * eval/prepare and digested (sha256 of its RFC 8785 canonical JSON). The eval VM runs exactly
 * this plan; the result route scores against exactly this plan's tasks, trials and policy.
 */
import { randomBytes } from "node:crypto";
import type { Static } from "@platform/challenge-sdk";
import { canonicalDigest } from "../crypto/index.js";
import type { EvalPlan as EvalPlanSchema } from "./eval-schemas.js";
import type { TaskSet } from "./task-set.js";
import type { VerifiedAllow } from "./verified-allow.js";

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

export function buildEvalPlan(input: {
  runId: string;
  submissionId: string;
  runNumber: number;
  allow: VerifiedAllow;
  agentSha256: string;
  taskSet: TaskSet;
  trials: number;
  runTokenSha256: string;
  issuedAt: Date;
  expiresAt: Date;
}): { plan: EvalPlan; digest: string } {
  const base = `/evaluation/v1/runs/${input.runId}`;
  const plan: EvalPlan = {
    schema_version: EVAL_PLAN_SCHEMA_VERSION,
    run_id: input.runId,
    submission_id: Number(input.submissionId),
    run_number: input.runNumber,
    review: {
      assignment_id: input.allow.assignmentId,
      session_id: input.allow.sessionId,
      review_digest: input.allow.reviewDigest,
    },
    agent_sha256: input.agentSha256,
    task_set: {
      revision_id: input.taskSet.revision_id,
      task_ids: input.taskSet.tasks.map((task) => task.id),
    },
    trials: input.trials,
    scoring_policy: SCORING_POLICY,
    scoring_policy_digest: canonicalDigest(SCORING_POLICY),
    endpoints: {
      result: `${base}/result`,
      telemetry_session: `${base}/telemetry-session`,
      progress: `${base}/progress`,
    },
    nonce: randomBytes(24).toString("base64url"),
    run_token_sha256: input.runTokenSha256,
    issued_at: input.issuedAt.toISOString(),
    expires_at: input.expiresAt.toISOString(),
  };
  return { plan, digest: canonicalDigest(plan) };
}
