/**
 * The named records of the interface (spec/agent-eval-challenge.md, "Named records"), as TypeBox
 * schemas: each route validates with them and /openapi.json publishes them under these names.
 * Part 1 of the service declares the submission records; the review and eval records join them
 * as their routes land.
 */
import { Type } from "@platform/challenge-sdk";
import { ReviewAttestation } from "./review/review-envelope-schemas.js";
import { MintedId, Sha256Hex, TaskId, Timestamp } from "./schema-primitives.js";
import { EVAL_FAILURE_CODES, EVAL_RUN_STATES } from "./state/index.js";

// ---------------------------------------------------------------------------------------------
// Eval runs (docs: "Eval runs").

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
    run_number: Type.Integer({ minimum: 1, maximum: 8 }),
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
export const EvalStatusQuery = Type.Object({
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 16, default: 10 })),
});

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
          score: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()]),
          failure_code: Type.Union([Type.String(), Type.Null()]),
        },
        { additionalProperties: false },
      ),
      { maxItems: 16 },
    ),
    next_cursor: Type.Union([Type.String({ maxLength: 512 }), Type.Null()]),
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

// ---------------------------------------------------------------------------------------------
// The eval result (docs: "The eval result"): byte-exact canonical JSON, quote-bound.

/** One task of the plan: its k trial scores and their mean. */
export const EvalTaskResult = Type.Object(
  {
    task_id: TaskId,
    trial_scores: Type.Array(Type.Number({ minimum: 0, maximum: 1 }), {
      minItems: 1,
      maxItems: 16,
    }),
    score: Type.Number({ minimum: 0, maximum: 1 }),
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
    score: Type.Number({ minimum: 0, maximum: 1 }),
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
    score: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()]),
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

// ---------------------------------------------------------------------------------------------
// Replay audits (docs: "Replay audits").

/** One accepted, fully attested run as a validator replays it. */
export const ReplayAuditRequestResponse = Type.Object(
  {
    run_id: MintedId,
    submission_id: Type.Integer({ minimum: 1 }),
    // Whether the sampler selected it (the list shows only selected runs).
    selected: Type.Boolean(),
    plan: EvalPlan,
    plan_digest: Sha256Hex,
    agent_sha256: Sha256Hex,
    attested_score: Type.Number({ minimum: 0, maximum: 1 }),
    attested_tasks: Type.Array(EvalTaskResult),
    accepted_at: Timestamp,
  },
  { additionalProperties: false, title: "ReplayAuditRequestResponse" },
);

/** The sampler's selection: round(rate x population) runs. */
export const ReplayAuditRequestListResponse = Type.Object(
  {
    rate: Type.Number({ minimum: 0, maximum: 1 }),
    population: Type.Integer({ minimum: 0 }),
    requests: Type.Array(ReplayAuditRequestResponse),
  },
  { additionalProperties: false, title: "ReplayAuditRequestListResponse" },
);

/** A validator's replay of one run: its audit id and the replayed trial scores. */
export const ReplayAuditResultRequest = Type.Object(
  {
    audit_id: MintedId,
    tasks: Type.Array(
      Type.Object(
        {
          task_id: TaskId,
          trial_scores: Type.Array(Type.Number({ minimum: 0, maximum: 1 }), {
            minItems: 1,
            maxItems: 16,
          }),
        },
        { additionalProperties: false },
      ),
      { maxItems: 256 },
    ),
  },
  { additionalProperties: false, title: "ReplayAuditResultRequest" },
);

/** The stored comparison: never a change to the accepted score or the weights. */
export const ReplayAuditResultResponse = Type.Object(
  {
    run_id: MintedId,
    audit_id: MintedId,
    attested_score: Type.Number({ minimum: 0, maximum: 1 }),
    replay_score: Type.Number({ minimum: 0, maximum: 1 }),
    delta: Type.Number({ minimum: 0, maximum: 1 }),
    tolerance: Type.Number({ minimum: 0, maximum: 1 }),
    exceeds_tolerance: Type.Boolean(),
    recorded_at: Timestamp,
  },
  { additionalProperties: false, title: "ReplayAuditResultResponse" },
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

// ---------------------------------------------------------------------------------------------
// The eval VM's reads and its telemetry (docs: "Telemetry and progress").

/** GET /evaluation/v1/runs/{id}: the run as its VM reads it. */
export const EvalRunView = Type.Object(
  { run_id: MintedId, state: EvalRunState, plan: EvalPlan, plan_sha256: Sha256Hex },
  { additionalProperties: false, title: "EvalRunView" },
);

/** GET /evaluation/v1/runs/{id}/env: the miner's env values, released to the run token only. */
export const EvalRunEnvResponse = Type.Object(
  { run_id: MintedId, env: Type.Record(Type.String(), Type.String()) },
  { additionalProperties: false, title: "EvalRunEnvResponse" },
);

/**
 * telemetry-session: a grant the submission's hotkey signed over telemetryGrantMessage (run, plan
 * digest, hotkey, nonce, timestamp). Never a mnemonic: the body has no room for one.
 */
export const TelemetrySessionRequest = Type.Object(
  {
    hotkey_ss58: Type.String({ pattern: "^[1-9A-HJ-NP-Za-km-z]{46,48}$" }),
    signature: Type.String({ pattern: "^(0x)?[0-9a-fA-F]{128}$" }),
    nonce: Type.String({ pattern: "^[\\x21-\\x7e]{8,128}$" }),
    // Unix seconds, as the signed request headers carry them.
    timestamp: Type.String({ pattern: "^[0-9]{1,12}$" }),
  },
  { additionalProperties: false, title: "TelemetrySessionRequest" },
);

export const TelemetrySessionResponse = Type.Object(
  { run_id: MintedId, session_id: Type.String(), expires_at: Timestamp, state: EvalRunState },
  { additionalProperties: false, title: "TelemetrySessionResponse" },
);

const ProgressSeq = Type.Integer({ minimum: 1, maximum: 2147483647 });
const ProgressMessage = Type.String({ maxLength: 1024 });

/**
 * One progress event (rule 14: it never touches a score). Closed objects: a score-shaped field,
 * or any field not named here, is a 422.
 */
export const ProgressEvent = Type.Union(
  [
    Type.Object(
      {
        type: Type.Literal("task.status"),
        task_id: TaskId,
        seq: ProgressSeq,
        status: Type.Union([
          Type.Literal("queued"),
          Type.Literal("running"),
          Type.Literal("finished"),
          Type.Literal("failed"),
        ]),
        trial: Type.Optional(Type.Integer({ minimum: 1, maximum: 16 })),
        message: Type.Optional(ProgressMessage),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        type: Type.Literal("task.progress"),
        task_id: TaskId,
        seq: ProgressSeq,
        completed_trials: Type.Integer({ minimum: 0, maximum: 16 }),
        total_trials: Type.Integer({ minimum: 1, maximum: 16 }),
        message: Type.Optional(ProgressMessage),
      },
      { additionalProperties: false },
    ),
  ],
  { title: "ProgressEvent" },
);

export const ProgressResponse = Type.Object(
  {
    run_id: MintedId,
    task_id: TaskId,
    seq: ProgressSeq,
    // False for an identical repeat of an event already recorded (idempotent).
    recorded: Type.Boolean(),
    duplicate: Type.Boolean(),
  },
  { additionalProperties: false, title: "ProgressResponse" },
);
