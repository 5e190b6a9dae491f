/**
 * Issues one immutable eval run inside the caller's transaction (which holds the submission row
 * and has checked the launch and the verified allow): the run token (only its sha256 stored and
 * named in the plan), the plan v1 and its digest, the run row, the submission's current-run
 * pointer, the run's "issue" status event and the submission's move to eval_running; at most
 * MAX_EVAL_RUNS_PER_REVIEW runs per allowing review (409 review_run_limit_reached).
 */
import { randomBytes } from "node:crypto";
import { databaseNow, HttpError, type Static, type TransactionSql } from "@platform/challenge-sdk";
import { canonicalDigest, capabilityToken, mintId, sha256Hex } from "../crypto/index.js";
import type { OwnedSubmission } from "../review/index.js";
import {
  appendStatusEvent,
  EVAL_RUN_TTL_SECONDS,
  MAX_EVAL_RUNS_PER_REVIEW,
  transitionSubmission,
} from "../state/index.js";
import { EVAL_ERROR_CODES } from "./eval-errors.js";
import {
  DEFAULT_TRIALS,
  EVAL_PLAN_SCHEMA_VERSION,
  type EvalPlan,
  SCORING_POLICY,
} from "./eval-plan.js";
import type { EvalPrepareResponse } from "./eval-schemas.js";
import type { FamilySet } from "./families/index.js";
import { instanceSeed } from "./instance-seed.js";
import type { VerifiedAllow } from "./verified-allow.js";

export const EVAL_TOKEN_ENV_KEY = "EVAL_RUN_TOKEN";

/** eval/prepare's and eval/retry's answer; the token only in the answer that issued the run. */
export type EvalPrepareAnswer = Static<typeof EvalPrepareResponse>;

export async function issueRun(
  tx: TransactionSql,
  input: {
    submission: OwnedSubmission;
    allow: VerifiedAllow;
    runNumber: number;
    predecessorId: string | null;
    secretKey: Buffer;
    families: FamilySet;
    /** eval_revalidate when the owner's revalidate restarts a finished evaluation. */
    submissionEvent?: "eval_issue" | "eval_revalidate";
  },
): Promise<EvalPrepareAnswer> {
  const { submission, allow } = input;
  const [{ n }] = (await tx`
    select count(*)::int as n from eval_runs
    where review_assignment_id = ${allow.assignmentId}`) as unknown as [{ n: number }];
  if (n >= MAX_EVAL_RUNS_PER_REVIEW) {
    throw new HttpError(
      409,
      EVAL_ERROR_CODES.reviewRunLimitReached,
      `The allowing review has authorised its ${MAX_EVAL_RUNS_PER_REVIEW} eval runs.`,
    );
  }
  const now = await databaseNow(tx);
  const runId = mintId();
  const { token, hash: tokenSha256 } = capabilityToken(input.secretKey, "evalRun", runId);
  const expiresAt = new Date(now.getTime() + EVAL_RUN_TTL_SECONDS * 1000);
  const base = `/evaluation/v1/runs/${runId}`;
  const nonce = randomBytes(24).toString("base64url");
  const plan: EvalPlan = {
    schema_version: EVAL_PLAN_SCHEMA_VERSION,
    run_id: runId,
    submission_id: Number(submission.id),
    run_number: input.runNumber,
    review: {
      assignment_id: allow.assignmentId,
      session_id: allow.sessionId,
      review_digest: allow.reviewDigest,
    },
    agent_sha256: submission.artifact_sha256,
    task_set: {
      revision_id: input.families.revision_id,
      task_ids: input.families.families.map((family) => family.id),
      // The commitment to the run's secret: a replay checks the seed it is given against it.
      instance_seed_sha256: sha256Hex(instanceSeed(input.secretKey, { runId, nonce })),
    },
    trials: DEFAULT_TRIALS,
    scoring_policy: SCORING_POLICY,
    scoring_policy_digest: canonicalDigest(SCORING_POLICY),
    endpoints: {
      result: `${base}/result`,
      telemetry_session: `${base}/telemetry-session`,
      progress: `${base}/progress`,
    },
    nonce,
    run_token_sha256: tokenSha256,
    issued_at: now.toISOString(),
    expires_at: expiresAt.toISOString(),
  };
  const digest = canonicalDigest(plan);
  const revalidate = input.submissionEvent === "eval_revalidate";
  await tx`
    insert into eval_runs (
      id, submission_id, review_assignment_id, run_number, review_run_number, predecessor_id,
      state, plan, plan_sha256, token_sha256, token_delivered_at, nonce, issued_at, expires_at)
    values (
      ${runId}, ${submission.id}, ${allow.assignmentId}, ${input.runNumber},
      ${n + 1}, ${input.predecessorId}, 'prepared', ${tx.json(plan as never)},
      ${digest}, ${tokenSha256}, ${now}, ${plan.nonce}, ${now}, ${expiresAt})`;
  await tx`update submissions set current_eval_run_id = ${runId} where id = ${submission.id}`;
  await appendStatusEvent(tx, {
    submissionId: submission.id,
    machine: "eval_run",
    subjectId: runId,
    event: "issue",
    fromState: null,
    toState: "prepared",
    actor: "miner",
    reasonCode: revalidate ? "revalidate" : input.predecessorId === null ? null : "retry",
    at: now,
  });
  await transitionSubmission(tx, {
    submissionId: submission.id,
    event: input.submissionEvent ?? "eval_issue",
    actor: "miner",
    reasonCode: revalidate ? "revalidate" : null,
    now,
  });
  return {
    run_id: runId,
    submission_id: Number(submission.id),
    state: "prepared",
    plan,
    plan_digest: digest,
    expires_at: expiresAt.toISOString(),
    secret_delivery: { env_key: EVAL_TOKEN_ENV_KEY, token },
  };
}
