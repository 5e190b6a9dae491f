/**
 * The LLM hard gate. It fails closed: only a valid verdict that allows the bundle lets it
 * through; a deny rejects it; anything else (provider down, timeout, malformed or cut verdict)
 * holds it, never allows it. Decisions are cached by (code hash, rules revision), so a bundle
 * re-run after an infrastructure failure is not reviewed (nor charged) twice.
 *
 * LLM_GATE=off is not handled here: the caller skips the gate and records that it did.
 */
import type { Sql } from "@platform/challenge-sdk";
import { type ChatProvider, type ChatRequestOptions, requestVerdict } from "./chat-completions.js";
import {
  REVIEW_LIMITS,
  type ReviewFile,
  type ReviewLimits,
  renderBundle,
  rulesRevision,
  SYSTEM_PROMPT,
} from "./review-prompt.js";
import { ADVISORY_RULE_IDS } from "./review-rules.js";
import type { Verdict } from "./verdict.js";
import { cachedVerdict, cacheVerdict } from "./verdict-cache.js";

/** How the gate is set up. */
export interface LlmGateOptions extends ChatProvider, Omit<ChatRequestOptions, "signal"> {
  /** Where verdicts are cached; no cache when absent. */
  sql?: Sql;
  limits?: ReviewLimits;
}

/** What the gate decided, with what it saw. */
export type LlmGateOutcome =
  | {
      outcome: "allow";
      verdict: Verdict;
      /** Allowed with findings (advisory ones, such as a tokenizer concern): worth a human look. */
      suspicious: boolean;
      cached: boolean;
      model: string;
      rulesRevision: string;
      attempts: number;
    }
  | {
      outcome: "deny";
      verdict: Verdict;
      /** The sentence for the submission's `error`. */
      message: string;
      cached: boolean;
      model: string;
      rulesRevision: string;
      attempts: number;
    }
  | {
      outcome: "held";
      /** Why no decision was reached (for the operator; the bundle is neither allowed nor denied). */
      message: string;
      model: string;
      rulesRevision: string;
      attempts: number;
    };

/** The bundle as the gate needs it. */
export interface GateBundle {
  codeHash: string;
  files: readonly ReviewFile[];
}

/** A configured gate: `review` one bundle at a time. */
export interface LlmGate {
  readonly rulesRevision: string;
  review(bundle: GateBundle, signal?: AbortSignal): Promise<LlmGateOutcome>;
}

/** A gate asking `options.model` at `options.baseUrl`. */
export function createLlmGate(options: LlmGateOptions): LlmGate {
  const limits = options.limits ?? REVIEW_LIMITS;
  const revision = rulesRevision(limits);
  const { model } = options;
  return {
    rulesRevision: revision,
    async review(bundle, signal) {
      if (options.sql) {
        const cached = await cachedVerdict(options.sql, bundle.codeHash, revision);
        if (cached)
          return decide(cached.verdict, {
            cached: true,
            model: cached.model,
            revision,
            attempts: 0,
          });
      }
      const rendered = renderBundle(bundle.files, limits);
      const answer = await requestVerdict(
        options,
        { system: SYSTEM_PROMPT, user: rendered.content },
        { ...options, ...(signal ? { signal } : {}) },
      );
      if (!answer.ok) {
        return {
          outcome: "held",
          message: `held: the LLM review could not decide (${answer.problem})`,
          model,
          rulesRevision: revision,
          attempts: answer.attempts,
        };
      }
      const outcome = decide(answer.verdict, {
        cached: false,
        model,
        revision,
        attempts: answer.attempts,
      });
      if (options.sql) {
        await cacheVerdict(options.sql, bundle.codeHash, revision, {
          outcome: outcome.outcome === "allow" ? "allow" : "deny",
          verdict: answer.verdict,
          model,
        });
      }
      return outcome;
    },
  };
}

/** Allow or deny from a valid verdict; advisory-only findings never deny. */
function decide(
  verdict: Verdict,
  at: { cached: boolean; model: string; revision: string; attempts: number },
): Exclude<LlmGateOutcome, { outcome: "held" }> {
  const common = {
    verdict,
    cached: at.cached,
    model: at.model,
    rulesRevision: at.revision,
    attempts: at.attempts,
  };
  const advisoryOnly =
    verdict.rule_ids.length > 0 && verdict.rule_ids.every((id) => ADVISORY_RULE_IDS.has(id));
  if (verdict.allow || advisoryOnly) {
    // Any finding on an allowed bundle (advisory, or a reviewer contradicting itself) is worth a look.
    return { outcome: "allow", suspicious: verdict.rule_ids.length > 0, ...common };
  }
  return { outcome: "deny", message: denyMessage(verdict), ...common };
}

function denyMessage(verdict: Verdict): string {
  const rules = verdict.rule_ids.filter((id) => !ADVISORY_RULE_IDS.has(id));
  const where = verdict.evidence
    .filter((item) => !ADVISORY_RULE_IDS.has(item.rule_id))
    .slice(0, 3)
    .map((item) => `${item.path}${item.line ? `:${item.line}` : ""} (${item.rule_id})`);
  const reason = verdict.reason.length > 500 ? `${verdict.reason.slice(0, 500)}…` : verdict.reason;
  return (
    `rejected by the LLM review${rules.length ? ` [${rules.join(", ")}]` : ""}: ${reason}` +
    (where.length ? ` — see ${where.join(", ")}` : "")
  );
}
