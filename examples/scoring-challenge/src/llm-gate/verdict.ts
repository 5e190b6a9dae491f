import { type Static, Type } from "@platform/challenge-sdk";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { REVIEW_RULES } from "./review-rules.js";

/** The function the reviewer is forced to call; its arguments are the verdict. */
export const VERDICT_TOOL_NAME = "submit_verdict";

const ruleIds = REVIEW_RULES.map((rule) => rule.id).join(", ");

/** One finding, pointing at the code. */
export const VerdictEvidence = Type.Object({
  rule_id: Type.String({ maxLength: 64, description: `One of: ${ruleIds}` }),
  path: Type.String({ maxLength: 300, description: "The file, as named in its '# file:' header" }),
  line: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
    description: "The line number shown in the margin, or null",
  }),
  explanation: Type.String({ maxLength: 8000 }),
});

/**
 * The reviewer's verdict. Limits are generous on purpose: a thorough verdict runs to several KB,
 * and a verdict refused for its length would hold an honest bundle.
 */
export const Verdict = Type.Object({
  allow: Type.Boolean({ description: "true unless a non-advisory rule is clearly broken" }),
  reason: Type.String({ maxLength: 20_000, description: "One paragraph a miner can act on" }),
  violations: Type.Array(Type.String({ maxLength: 8000 }), {
    maxItems: 100,
    description: "Each violation found, one sentence each; empty when allowed",
  }),
  confidence: Type.Number({ minimum: 0, maximum: 1, description: "From 0 to 1" }),
  rule_ids: Type.Array(Type.String({ maxLength: 64 }), {
    maxItems: 100,
    description: `Ids of the rules broken (or, when allowed, advisory notes), from: ${ruleIds}`,
  }),
  evidence: Type.Array(VerdictEvidence, { maxItems: 100 }),
});
export type Verdict = Static<typeof Verdict>;

const check = TypeCompiler.Compile(Verdict);

/** The verdict in `value`, or the first few problems as `path: message`. */
export function parseVerdict(
  value: unknown,
): { ok: true; verdict: Verdict } | { ok: false; problems: string[] } {
  if (check.Check(value)) return { ok: true, verdict: value };
  const problems = [...check.Errors(value)]
    .slice(0, 5)
    .map((error) => `${error.path || "/"}: ${error.message}`);
  return { ok: false, problems };
}

/** The `tools` entry of a chat-completions request: the verdict schema as plain JSON Schema. */
export function verdictTool(): Record<string, unknown> {
  return {
    type: "function",
    function: {
      name: VERDICT_TOOL_NAME,
      description: "Record your verdict on the bundle. Call it exactly once.",
      // A JSON round trip drops TypeBox's symbol keys: what remains is standard JSON Schema.
      parameters: JSON.parse(JSON.stringify(Verdict)),
    },
  };
}
