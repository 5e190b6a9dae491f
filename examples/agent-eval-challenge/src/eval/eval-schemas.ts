/**
 * The records of the miner's and the owner's eval routes (prepare, status, retry, cancel, failure,
 * revalidate) and the eval plan v1 they share (docs: "Eval runs").
 */
import { Type } from "@platform/challenge-sdk";
import {
  Fraction,
  MintedId,
  NextCursor,
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
export const EvalRunState = Type.Union(
  EVAL_RUN_STATES.map((state) => Type.Literal(state)),
  { title: "EvalRunState" },
);

/** The eval plan v1: one run, immutable; plan_digest is its canonical sha256. */
export const EvalPlan = Type.Object(
  {
    schema_version: Type.Literal("eval-plan/v1"),
    run_id: MintedId,
    submission_id: Type.Integer({ minimum: 1 }),
    run_number: Type.Integer({ minimum: 1, maximum: MAX_EVAL_RUNS_PER_SUBMISSION }),
    review: Type.Object(
      { assignment_id: MintedId, session_id: MintedId, review_digest: Sha256Hex },
      { additionalProperties: false },
    ),
    agent_sha256: Sha256Hex,
    task_set: Type.Object(
      { revision_id: Sha256Hex, task_ids: Type.Array(Type.String()) },
      { additionalProperties: false },
    ),
    trials: Type.Integer({ minimum: 1 }),
    scoring_policy: Type.Record(Type.String(), Type.Unknown()),
    scoring_policy_digest: Sha256Hex,
    endpoints: Type.Object(
      { result: Type.String(), telemetry_session: Type.String(), progress: Type.String() },
      { additionalProperties: false },
    ),
    nonce: Type.String(),
    run_token_sha256: Sha256Hex,
    issued_at: Timestamp,
    expires_at: Timestamp,
  },
  { additionalProperties: false, title: "EvalPlan" },
);

/** eval/prepare and eval/retry: the run, and its token on the one delivery. */
export const EvalPrepareResponse = Type.Object(
  {
    run_id: MintedId,
    submission_id: Type.Integer({ minimum: 1 }),
    state: EvalRunState,
    plan: EvalPlan,
    plan_digest: Sha256Hex,
    expires_at: Timestamp,
    secret_delivery: Type.Optional(
      Type.Object(
        {
          env_key: Type.Literal("EVAL_RUN_TOKEN"),
          token: Type.String({ description: "The run-scoped bearer token; never shown again" }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, title: "EvalPrepareResponse" },
);

/** eval/status's paging: cursor at most 512 characters (the spec's limit), 1-16 runs a page. */
export const EvalStatusQuery = PageQuery(EVAL_STATUS_MAX_LIMIT, EVAL_STATUS_DEFAULT_LIMIT);

/** eval/status: the submission's runs, newest first. */
export const EvalHistoryResponse = Type.Object(
  {
    submission_id: Type.Integer({ minimum: 1 }),
    current_run_id: Type.Union([MintedId, Type.Null()]),
    items: Type.Array(
      Type.Object(
        {
          run_id: MintedId,
          run_number: Type.Integer({ minimum: 1 }),
          review_assignment_id: MintedId,
          state: EvalRunState,
          plan_digest: Sha256Hex,
          issued_at: Timestamp,
          expires_at: Timestamp,
          started_at: Type.Union([Timestamp, Type.Null()]),
          result_received_at: Type.Union([Timestamp, Type.Null()]),
          accepted_at: Type.Union([Timestamp, Type.Null()]),
          score: Type.Union([Fraction, Type.Null()]),
          failure_code: Type.Union([Type.String(), Type.Null()]),
        },
        { additionalProperties: false },
      ),
      { maxItems: 16 },
    ),
    next_cursor: NextCursor,
  },
  { additionalProperties: false, title: "EvalHistoryResponse" },
);

/** eval/retry and eval/cancel: the run acted on (compare-and-swap on the current run). */
export const EvalExpectedRunRequest = Type.Object(
  { expected_run_id: MintedId },
  { additionalProperties: false, title: "EvalExpectedRunRequest" },
);

/** eval/failure: the run, a reason code from a closed set, one bounded message. */
export const EvalFailureRequest = Type.Object(
  {
    expected_run_id: MintedId,
    reason_code: Type.Union(EVAL_FAILURE_CODES.map((code) => Type.Literal(code))),
    message: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false, title: "EvalFailureRequest" },
);

/** eval/cancel and eval/failure: the run's state now, and the failure record if any. */
export const EvalMutationResponse = Type.Object(
  {
    run_id: MintedId,
    state: EvalRunState,
    failure: Type.Union([
      Type.Object(
        { reason_code: Type.String(), message: Type.String() },
        { additionalProperties: false },
      ),
      Type.Null(),
    ]),
  },
  { additionalProperties: false, title: "EvalMutationResponse" },
);

/** owner revalidate (rule 23): the pending request the miner's next eval/prepare honours. */
export const EvalRevalidateResponse = Type.Object(
  {
    submission_id: Type.Integer({ minimum: 1 }),
    revalidation_id: MintedId,
    requested_at: Timestamp,
    previous_run_id: MintedId,
    state: Type.Literal("pending"),
  },
  { additionalProperties: false, title: "EvalRevalidateResponse" },
);
