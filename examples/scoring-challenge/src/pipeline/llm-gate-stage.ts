/**
 * The LLM hard gate as a pipeline stage. LLM_GATE=off skips it (the caller records "off" on the
 * submission). Required with no reviewer configured holds the bundle: the gate fails closed, it
 * never lets a bundle through because nobody was asked. Otherwise the reviewer's decision
 * (cached by code hash and rules revision, so a re-run after an infrastructure failure is not
 * charged twice) allows, rejects or holds it.
 */
import type { Bundle } from "../bundle/index.js";
import type { LlmGateOutcome } from "../llm-gate/index.js";
import type { PipelineDeps } from "./pipeline-context.js";

/** The stage's outcome, with what goes in the submission's audit trail. */
export type LlmStageOutcome =
  | { outcome: "off" }
  | { outcome: "allow"; audit: Record<string, unknown> }
  | { outcome: "deny" | "held"; message: string; audit: Record<string, unknown> };

/** The sentence a bundle is held with when no reviewer is configured. */
export const NO_REVIEWER_MESSAGE =
  "held: the LLM review is required but no reviewer is configured (the operator must set " +
  "LLM_BASE_URL and LLM_MODEL); nothing runs until it is";

/** Review `bundle` (or skip the review when the operator turned it off). */
export async function llmGateStage(
  deps: Pick<PipelineDeps, "options" | "llm">,
  bundle: Bundle,
  signal: AbortSignal,
): Promise<LlmStageOutcome> {
  if (deps.options.llm.mode === "off") return { outcome: "off" };
  if (deps.llm === null) {
    return {
      outcome: "held",
      message: NO_REVIEWER_MESSAGE,
      audit: { outcome: "held", configured: false },
    };
  }
  const review = await deps.llm.review({ codeHash: bundle.codeHash, files: bundle.files }, signal);
  const audit = auditOf(review);
  if (review.outcome === "allow") return { outcome: "allow", audit };
  return { outcome: review.outcome, message: review.message, audit };
}

function auditOf(review: LlmGateOutcome): Record<string, unknown> {
  const common = {
    outcome: review.outcome,
    model: review.model,
    rules_revision: review.rulesRevision,
    attempts: review.attempts,
  };
  if (review.outcome === "held") return { ...common, message: review.message };
  return {
    ...common,
    cached: review.cached,
    verdict: review.verdict,
    ...(review.outcome === "allow" ? { suspicious: review.suspicious } : {}),
  };
}
