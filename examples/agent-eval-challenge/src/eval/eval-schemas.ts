/**
 * The records of the miner's and the owner's eval routes (prepare, status, retry, cancel, failure,
 * revalidate) and the eval plan v1 they share (docs: "Eval runs").
 */
import { Type } from "@platform/challenge-sdk";
import {
  ClosedRecord,
  Fraction,
  Literals,
  MintedId,
  NamedRecord,
  NextCursor,
  Nullable,
  PageQuery,
  Sha256Hex,
  Timestamp,
} from "../schema-primitives.js";
import {
  EVAL_FAILURE_CODES,
  EVAL_RUN_STATES,
  MAX_EVAL_RUNS_PER_SUBMISSION,
} from "../state/index.js";
import { EVAL_STATUS_DEFAULT_LIMIT, EVAL_STATUS_MAX_LIMIT } from "./eval-status.js";

/** The states of an eval run (src/state/eval-run-states.ts). */
export const EvalRunState = Literals(EVAL_RUN_STATES, { title: "EvalRunState" });

/** The eval plan v1: one run, immutable; plan_digest is its canonical sha256. */
export const EvalPlan = NamedRecord("EvalPlan", {
  schema_version: Type.Literal("eval-plan/v1"),
  run_id: MintedId,
  submission_id: Type.Integer({ minimum: 1 }),
  run_number: Type.Integer({ minimum: 1, maximum: MAX_EVAL_RUNS_PER_SUBMISSION }),
  review: ClosedRecord({ assignment_id: MintedId, session_id: MintedId, review_digest: Sha256Hex }),
  agent_sha256: Sha256Hex,
  task_set: ClosedRecord({
    revision_id: Sha256Hex,
    task_ids: Type.Array(Type.String()),
    // sha256 of the run's instance seed: a commitment, never the seed (docs: "The task families").
    instance_seed_sha256: Sha256Hex,
  }),
  trials: Type.Integer({ minimum: 1 }),
  scoring_policy: Type.Record(Type.String(), Type.Unknown()),
  scoring_policy_digest: Sha256Hex,
  endpoints: ClosedRecord({
    result: Type.String(),
    telemetry_session: Type.String(),
    progress: Type.String(),
  }),
  nonce: Type.String(),
  run_token_sha256: Sha256Hex,
  issued_at: Timestamp,
  expires_at: Timestamp,
});

/** eval/prepare and eval/retry: the run, and its token on the one delivery. */
export const EvalPrepareResponse = NamedRecord("EvalPrepareResponse", {
  run_id: MintedId,
  submission_id: Type.Integer({ minimum: 1 }),
  state: EvalRunState,
  plan: EvalPlan,
  plan_digest: Sha256Hex,
  expires_at: Timestamp,
  secret_delivery: Type.Optional(
    ClosedRecord({
      env_key: Type.Literal("EVAL_RUN_TOKEN"),
      token: Type.String({ description: "The run-scoped bearer token; never shown again" }),
    }),
  ),
});

/** eval/status's paging: cursor at most 512 characters (the spec's limit), 1-16 runs a page. */
export const EvalStatusQuery = PageQuery(EVAL_STATUS_MAX_LIMIT, EVAL_STATUS_DEFAULT_LIMIT);

/** eval/status: the submission's runs, newest first. */
export const EvalHistoryResponse = NamedRecord("EvalHistoryResponse", {
  submission_id: Type.Integer({ minimum: 1 }),
  current_run_id: Nullable(MintedId),
  items: Type.Array(
    ClosedRecord({
      run_id: MintedId,
      run_number: Type.Integer({ minimum: 1 }),
      review_assignment_id: MintedId,
      state: EvalRunState,
      plan_digest: Sha256Hex,
      issued_at: Timestamp,
      expires_at: Timestamp,
      started_at: Nullable(Timestamp),
      result_received_at: Nullable(Timestamp),
      accepted_at: Nullable(Timestamp),
      score: Nullable(Fraction),
      failure_code: Nullable(Type.String()),
    }),
    { maxItems: 16 },
  ),
  next_cursor: NextCursor,
});

/** eval/retry and eval/cancel: the run acted on (compare-and-swap on the current run). */
export const EvalExpectedRunRequest = NamedRecord("EvalExpectedRunRequest", {
  expected_run_id: MintedId,
});

/** eval/failure: the run, a reason code from a closed set, one bounded message. */
export const EvalFailureRequest = NamedRecord("EvalFailureRequest", {
  expected_run_id: MintedId,
  reason_code: Literals(EVAL_FAILURE_CODES),
  message: Type.String({ minLength: 1, maxLength: 1024 }),
});

/** eval/cancel and eval/failure: the run's state now, and the failure record if any. */
export const EvalMutationResponse = NamedRecord("EvalMutationResponse", {
  run_id: MintedId,
  state: EvalRunState,
  failure: Nullable(ClosedRecord({ reason_code: Type.String(), message: Type.String() })),
});

/** owner revalidate (rule 23): the pending request the miner's next eval/prepare honours. */
export const EvalRevalidateResponse = NamedRecord("EvalRevalidateResponse", {
  submission_id: Type.Integer({ minimum: 1 }),
  revalidation_id: MintedId,
  requested_at: Timestamp,
  previous_run_id: MintedId,
  state: Type.Literal("pending"),
});

/** The records /openapi.json names, in its order (challenge.ts lists each feature's). */
export const EVAL_RECORDS = {
  EvalRunState,
  EvalPlan,
  EvalPrepareResponse,
  EvalHistoryResponse,
  EvalExpectedRunRequest,
  EvalFailureRequest,
  EvalMutationResponse,
};
