/**
 * The eval result v1 the eval VM posts (byte-exact canonical JSON, quote-bound) and its receipt
 * (docs: "The eval result").
 */
import { Type } from "@platform/challenge-sdk";
import { ReviewAttestation } from "../review/review-envelope-schemas.js";
import { Fraction, MintedId, Sha256Hex, TaskId, Timestamp } from "../schema-primitives.js";
import { EvalRunState } from "./eval-schemas.js";

/** One task of the plan: its k trial scores and their mean. */
export const EvalTaskResult = Type.Object(
  {
    task_id: TaskId,
    trial_scores: Type.Array(Fraction, {
      minItems: 1,
      maxItems: 16,
    }),
    score: Fraction,
  },
  { additionalProperties: false, title: "EvalTaskResult" },
);

/** What the eval VM measured for one run; result_digest is its canonical sha256. */
export const EvalResultCore = Type.Object(
  {
    schema_version: Type.Literal("eval-result-core/v1"),
    run_id: MintedId,
    plan_digest: Sha256Hex,
    agent_sha256: Sha256Hex,
    task_set_revision_id: Sha256Hex,
    tasks: Type.Array(EvalTaskResult, { maxItems: 256 }),
    score: Fraction,
    evaluator: Type.Object(
      {
        name: Type.String({ pattern: "^[a-z0-9][a-z0-9._-]{0,63}$" }),
        version: Type.String({ pattern: "^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$" }),
      },
      { additionalProperties: false },
    ),
    completed_at: Timestamp,
  },
  { additionalProperties: false, title: "EvalResultCore" },
);

/** POST /evaluation/v1/runs/{id}/result: the result v1, as byte-exact canonical JSON. */
export const EvalResult = Type.Object(
  {
    schema_version: Type.Literal("eval-result/v1"),
    domain: Type.Literal("platform/agent-eval/eval-result/v1"),
    result_core: EvalResultCore,
    result_digest: Sha256Hex,
    report_data_hex: Type.String({ pattern: "^[0-9a-f]{128}$" }),
    attestation: ReviewAttestation,
  },
  { additionalProperties: false, title: "EvalResult" },
);

/** The result route's answer: 202 on first receipt, 200 on an identical replay. */
export const EvalReceiptResponse = Type.Object(
  {
    run_id: MintedId,
    state: EvalRunState,
    result_sha256: Sha256Hex,
    received_at: Timestamp,
    // The accepted score (null unless accepted).
    score: Type.Union([Fraction, Type.Null()]),
    verification: Type.Object(
      {
        status: Type.Union([Type.Literal("verified"), Type.Literal("rejected")]),
        code: Type.Union([Type.String(), Type.Null()]),
        message: Type.Union([Type.String(), Type.Null()]),
        verifier: Type.Union([Type.Literal("dcap"), Type.Literal("dev")]),
        confidential: Type.Boolean(),
        // Both the review and the result verified: what replay audits sample from.
        fully_attested: Type.Boolean(),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, title: "EvalReceiptResponse" },
);
