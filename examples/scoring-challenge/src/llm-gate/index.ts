// The LLM hard gate: a forced-tool-call review by any OpenAI-compatible server, fail-closed.
export {
  type ChatAnswer,
  type ChatProvider,
  type ChatRequestOptions,
  chatRequestBody,
  requestVerdict,
} from "./chat-completions.js";
export {
  createLlmGate,
  type GateBundle,
  type LlmGate,
  type LlmGateOptions,
  type LlmGateOutcome,
} from "./llm-gate.js";
export {
  REVIEW_LIMITS,
  type RenderedBundle,
  type ReviewFile,
  type ReviewLimits,
  renderBundle,
  rulesRevision,
  SYSTEM_PROMPT,
} from "./review-prompt.js";
export {
  ADVISORY_RULE_IDS,
  REVIEW_RULES,
  type ReviewRule,
  STANDARD_TECHNIQUES,
} from "./review-rules.js";
export {
  parseVerdict,
  VERDICT_TOOL_NAME,
  Verdict,
  VerdictEvidence,
  verdictTool,
} from "./verdict.js";
export { type CachedVerdict, cachedVerdict, cacheVerdict } from "./verdict-cache.js";
