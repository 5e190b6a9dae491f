/**
 * The eval result v1: what the eval VM posts to /evaluation/v1/runs/{id}/result as byte-exact
 * canonical JSON, built here (by the reference eval worker) and checked here (by the service).
 * The local checks run in order, the first failure names the rejection: the result digest, the
 * binding to the run's plan (run, plan digest, agent, task set), the scores (every trial in
 * [0, 1], the plan's k trials a task, a task's score the mean of its trials, the job's the mean
 * over every task of the plan with a missing task counting 0), the report_data binding (result
 * digest, run id, plan nonce), the time order, the quote's encoding. The quote itself is then
 * verified like a review's (verify-attestation.ts).
 */
import type { Static } from "@platform/challenge-sdk";
import {
  evalResultReportData,
  type VmAttestationInput,
  vmAttestation,
} from "../attestation/index.js";
import { canonicalDigest } from "../crypto/index.js";
import type { EvalPlan } from "./eval-plan.js";
import type { EvalResultCore, EvalResult as EvalResultSchema } from "./eval-result-schemas.js";

export type EvalResult = Static<typeof EvalResultSchema>;
export type EvalResultCoreRecord = Static<typeof EvalResultCore>;

export const EVAL_RESULT_SCHEMA_VERSION = "eval-result/v1";
export const EVAL_RESULT_DOMAIN = "platform/agent-eval/eval-result/v1";
export const EVAL_RESULT_CORE_SCHEMA_VERSION = "eval-result-core/v1";

/** Floating-point room when recomputing means (the scores are means of 0/1 trials). */
const SCORE_EPSILON = 1e-9;
const CLOCK_SKEW_MS = 60_000;

const mean = (values: readonly number[]) =>
  values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;

/** The job score of per-task trial scores under the plan: the mean over every plan task. */
export function jobScore(plan: Pick<EvalPlan, "task_set">, tasks: EvalResultCoreRecord["tasks"]) {
  const byTask = new Map(tasks.map((task) => [task.task_id, mean(task.trial_scores)]));
  return mean(plan.task_set.task_ids.map((id) => byTask.get(id) ?? 0));
}

/** Whether weights may count the result: every plan task present and at least one passed. */
export function resultIsComplete(
  plan: Pick<EvalPlan, "task_set">,
  tasks: EvalResultCoreRecord["tasks"],
): boolean {
  const present = new Set(tasks.map((task) => task.task_id));
  return (
    plan.task_set.task_ids.every((id) => present.has(id)) && tasks.some((task) => task.score > 0)
  );
}

export interface BuildEvalResultInput extends VmAttestationInput {
  plan: EvalPlan;
  planDigest: string;
  /** Trial scores per task id, in the plan's order. */
  trials: { task_id: string; trial_scores: number[] }[];
  evaluator: EvalResultCoreRecord["evaluator"];
  completedAt: string;
}

/** The result of one run: core, digest, the report_data binding and the quote. */
export async function buildEvalResult(input: BuildEvalResultInput): Promise<EvalResult> {
  const tasks = input.trials.map((task) => ({
    task_id: task.task_id,
    trial_scores: task.trial_scores,
    score: mean(task.trial_scores),
  }));
  const core: EvalResultCoreRecord = {
    schema_version: EVAL_RESULT_CORE_SCHEMA_VERSION,
    run_id: input.plan.run_id,
    plan_digest: input.planDigest,
    agent_sha256: input.plan.agent_sha256,
    task_set_revision_id: input.plan.task_set.revision_id,
    tasks,
    score: jobScore(input.plan, tasks),
    evaluator: input.evaluator,
    completed_at: input.completedAt,
  };
  const resultDigest = canonicalDigest(core);
  const reportData = evalResultReportData({
    resultDigest,
    runId: input.plan.run_id,
    nonce: input.plan.nonce,
  });
  return {
    schema_version: EVAL_RESULT_SCHEMA_VERSION,
    domain: EVAL_RESULT_DOMAIN,
    result_core: core,
    result_digest: resultDigest,
    report_data_hex: reportData.toString("hex"),
    attestation: await vmAttestation(input, reportData),
  };
}

export const RESULT_REJECTION_CODES = [
  "result_digest_mismatch",
  "plan_binding_mismatch",
  "unknown_task",
  "trial_count_mismatch",
  "score_mismatch",
  "report_data_binding_mismatch",
  "time_order_invalid",
  "quote_encoding_invalid",
] as const;
export type ResultRejectionCode = (typeof RESULT_REJECTION_CODES)[number];

export type ResultCheck =
  | { ok: true; expectedReportData: Buffer; complete: boolean }
  | { ok: false; code: ResultRejectionCode; message: string };

const fail = (code: ResultRejectionCode, message: string): ResultCheck => ({
  ok: false,
  code,
  message,
});

/** The local checks of a result against its run (deterministic: a failure is definitive). */
export function checkResultLocally(
  result: EvalResult,
  run: { id: string; plan: EvalPlan; planDigest: string },
  now: Date,
): ResultCheck {
  const core = result.result_core;
  const { plan } = run;
  if (canonicalDigest(core) !== result.result_digest) {
    return fail("result_digest_mismatch", "result_digest is not the sha256 of the canonical core");
  }
  if (
    core.run_id !== run.id ||
    core.plan_digest !== run.planDigest ||
    core.agent_sha256 !== plan.agent_sha256 ||
    core.task_set_revision_id !== plan.task_set.revision_id
  ) {
    return fail(
      "plan_binding_mismatch",
      "the core's run, plan digest, agent or task set is not this run's",
    );
  }
  const planned = new Set(plan.task_set.task_ids);
  const seen = new Set<string>();
  for (const task of core.tasks) {
    if (!planned.has(task.task_id) || seen.has(task.task_id)) {
      return fail("unknown_task", `task ${task.task_id} is not in the plan, or repeated`);
    }
    seen.add(task.task_id);
    if (task.trial_scores.length !== plan.trials) {
      return fail(
        "trial_count_mismatch",
        `task ${task.task_id} has ${task.trial_scores.length} trials, the plan ${plan.trials}`,
      );
    }
    if (Math.abs(task.score - mean(task.trial_scores)) > SCORE_EPSILON) {
      return fail("score_mismatch", `task ${task.task_id}'s score is not the mean of its trials`);
    }
  }
  if (Math.abs(core.score - jobScore(plan, core.tasks)) > SCORE_EPSILON) {
    return fail("score_mismatch", "the job score is not the mean over the plan's tasks");
  }
  const expectedReportData = evalResultReportData({
    resultDigest: result.result_digest,
    runId: run.id,
    nonce: plan.nonce,
  });
  if (result.report_data_hex !== expectedReportData.toString("hex")) {
    return fail(
      "report_data_binding_mismatch",
      "report_data_hex does not bind this result's digest, the run and the plan's nonce",
    );
  }
  const completedAt = Date.parse(core.completed_at);
  if (!(completedAt >= Date.parse(plan.issued_at)) || completedAt > now.getTime() + CLOCK_SKEW_MS) {
    return fail("time_order_invalid", "completed_at must follow the run's issue and precede now");
  }
  const quote = Buffer.from(result.attestation.quote, "base64");
  if (quote.toString("base64") !== result.attestation.quote) {
    return fail("quote_encoding_invalid", "the quote is not canonical base64");
  }
  return { ok: true, expectedReportData, complete: resultIsComplete(plan, core.tasks) };
}
