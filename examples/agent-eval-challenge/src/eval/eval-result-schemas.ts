/**
 * The eval result v1 the eval VM posts (byte-exact canonical JSON, quote-bound) and its receipt
 * (docs: "The eval result").
 */
import { Type } from "@platform/challenge-sdk";
import {
  AdvisoryIds,
  ReviewAttestation,
  TcbStatusText,
} from "../review/review-envelope-schemas.js";
import {
  ClosedRecord,
  Fraction,
  MintedId,
  NamedRecord,
  Nullable,
  Sha256Hex,
  Sha384Hex,
  TaskId,
  Timestamp,
} from "../schema-primitives.js";
import { EvalRunState } from "./eval-schemas.js";

/** One task of the plan: its k trial scores and their mean. */
export const EvalTaskResult = NamedRecord("EvalTaskResult", {
  task_id: TaskId,
  trial_scores: Type.Array(Fraction, {
    minItems: 1,
    maxItems: 16,
  }),
  score: Fraction,
});

/** What the eval VM measured for one run; result_digest is its canonical sha256. */
export const EvalResultCore = NamedRecord("EvalResultCore", {
  schema_version: Type.Literal("eval-result-core/v1"),
  run_id: MintedId,
  plan_digest: Sha256Hex,
  agent_sha256: Sha256Hex,
  task_set_revision_id: Sha256Hex,
  tasks: Type.Array(EvalTaskResult, { maxItems: 256 }),
  score: Fraction,
  evaluator: ClosedRecord({
    name: Type.String({ pattern: "^[a-z0-9][a-z0-9._-]{0,63}$" }),
    version: Type.String({ pattern: "^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$" }),
  }),
  completed_at: Timestamp,
});

/** POST /evaluation/v1/runs/{id}/result: the result v1, as byte-exact canonical JSON. */
export const EvalResult = NamedRecord("EvalResult", {
  schema_version: Type.Literal("eval-result/v1"),
  domain: Type.Literal("platform/agent-eval/eval-result/v1"),
  result_core: EvalResultCore,
  result_digest: Sha256Hex,
  report_data_hex: Type.String({ pattern: "^[0-9a-f]{128}$" }),
  attestation: ReviewAttestation,
});

/** The result route's answer: 202 on first receipt, 200 on an identical replay. */
export const EvalReceiptResponse = NamedRecord("EvalReceiptResponse", {
  run_id: MintedId,
  state: EvalRunState,
  result_sha256: Sha256Hex,
  received_at: Timestamp,
  // The accepted score (null unless accepted).
  score: Type.Union([Fraction, Type.Null()]),
  verification: ClosedRecord({
    status: Type.Union([Type.Literal("verified"), Type.Literal("rejected")]),
    code: Type.Union([Type.String(), Type.Null()]),
    message: Type.Union([Type.String(), Type.Null()]),
    verifier: Type.Union([Type.Literal("dcap"), Type.Literal("dev")]),
    confidential: Type.Boolean(),
    // The MRTD the verified quote reported (null when rejected), as a review's verification has.
    measurement: Nullable(Sha384Hex),
    // dcap: Intel's TCB status and advisories, as a review's verification has.
    tcb_status: Type.Optional(Nullable(TcbStatusText)),
    advisory_ids: Type.Optional(Nullable(AdvisoryIds)),
    // Both the review and the result verified: what replay audits sample from.
    fully_attested: Type.Boolean(),
  }),
});

/** The records /openapi.json names, in its order (challenge.ts lists each feature's). */
export const EVAL_RESULT_RECORDS = {
  EvalTaskResult,
  EvalResultCore,
  EvalResult,
  EvalReceiptResponse,
};
