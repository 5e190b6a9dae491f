/**
 * The named records of the interface (spec/agent-eval-challenge.md, "Named records"), as TypeBox
 * schemas: each route validates with them and /openapi.json publishes them under these names.
 * Part 1 of the service declares the submission records; the review and eval records join them
 * as their routes land.
 */
import { Type } from "@platform/challenge-sdk";
import { ENV_KEY_PATTERN, MAX_ENV_KEYS, MAX_ENV_VALUE_BYTES } from "./env/env-rules.js";
import { MAX_EVIDENCE_OBJECT_BYTES, MAX_EVIDENCE_OBJECTS } from "./review/review-envelope.js";
import { MintedId, Sha256Hex, Sha384Hex, TaskId, Timestamp } from "./schema-primitives.js";
import {
  ASSIGNMENT_STATES,
  DECIDED_ASSIGNMENT_STATES,
  EVAL_FAILURE_CODES,
  EVAL_RUN_STATES,
} from "./state/index.js";

// ---------------------------------------------------------------------------------------------
// Review flow: prepare, retry, cancel, operator approvals.

/** The states of a review assignment (src/state/assignment-states.ts). */
export const ReviewAssignmentState = Type.Union(
  ASSIGNMENT_STATES.map((state) => Type.Literal(state)),
  { title: "ReviewAssignmentState" },
);

/**
 * The immutable assignment core (review assignment v1): what the review VM reviews and what its
 * report is bound to. `assignment_digest` is the sha256 hex of its RFC 8785 canonical JSON.
 */
export const ReviewAssignmentCore = Type.Object(
  {
    schema_version: Type.Literal("review-assignment/v1"),
    assignment_id: MintedId,
    session_id: MintedId,
    submission_id: Type.Integer({ minimum: 1 }),
    attempt: Type.Integer({ minimum: 1, maximum: 16 }),
    artifact_sha256: Sha256Hex,
    artifact_size: Type.Integer({ minimum: 1 }),
    rules_revision_id: Sha256Hex,
    nonce: Type.String({ pattern: "^[A-Za-z0-9_-]{16,128}$" }),
    issued_at: Timestamp,
    expires_at: Timestamp,
  },
  { additionalProperties: false, title: "ReviewAssignmentCore" },
);

/** The one delivery of an assignment's token, for the review VM's encrypted environment. */
export const ReviewSecretDelivery = Type.Object(
  {
    env_key: Type.Literal("REVIEW_SESSION_TOKEN"),
    token: Type.String({ description: "The assignment-scoped bearer token; never shown again" }),
  },
  { additionalProperties: false, title: "ReviewSecretDelivery" },
);

/** review/prepare and review/retry: the current assignment, and its token on the one delivery. */
export const ReviewPrepareResponse = Type.Object(
  {
    assignment_id: MintedId,
    session_id: MintedId,
    state: ReviewAssignmentState,
    assignment: ReviewAssignmentCore,
    assignment_digest: Sha256Hex,
    expires_at: Timestamp,
    secret_delivery: Type.Optional(ReviewSecretDelivery),
  },
  { additionalProperties: false, title: "ReviewPrepareResponse" },
);

/** review/retry: the assignment the miner retries (compare-and-swap), and an approval if needed. */
export const ReviewRetryRequest = Type.Object(
  {
    expected_assignment_id: MintedId,
    approval_id: Type.Optional(MintedId),
  },
  { additionalProperties: false, title: "ReviewRetryRequest" },
);

/** review/cancel: the current assignment to cancel. */
export const ReviewCancelRequest = Type.Object(
  { assignment_id: MintedId },
  { additionalProperties: false, title: "ReviewCancelRequest" },
);

/** review/cancel's answer. */
export const ReviewCancelResponse = Type.Object(
  { assignment_id: MintedId, state: Type.Literal("cancelled") },
  { additionalProperties: false, title: "ReviewCancelResponse" },
);

/** An operator's one-use approval to retry after a rejected or escalated assignment. */
export const ReviewApprovalRequest = Type.Object(
  {
    assignment_id: MintedId,
    reason: Type.String({ minLength: 1, maxLength: 1024, description: "Why, for the history" }),
  },
  { additionalProperties: false, title: "ReviewApprovalRequest" },
);

/** The approval: its id goes in the retry's `approval_id` before `expires_at` (<= 300 s). */
export const ReviewApprovalResponse = Type.Object(
  { approval_id: MintedId, assignment_id: MintedId, expires_at: Timestamp },
  { additionalProperties: false, title: "ReviewApprovalResponse" },
);

// ---------------------------------------------------------------------------------------------
// The review VM's routes (assignment-scoped bearer) and the miner's review/deployed.

/** GET /review/v1/assignments/{assignment_id}: the assignment core, its digest and its state. */
export const ReviewAssignmentResponse = Type.Object(
  {
    assignment_id: MintedId,
    session_id: MintedId,
    state: ReviewAssignmentState,
    assignment: ReviewAssignmentCore,
    assignment_digest: Sha256Hex,
    expires_at: Timestamp,
  },
  { additionalProperties: false, title: "ReviewAssignmentResponse" },
);

/** One file of the rules bundle v1. */
export const RulesBundleFile = Type.Object(
  {
    path: Type.String(),
    length: Type.Integer({ minimum: 0 }),
    sha256: Sha256Hex,
    content_b64: Type.String(),
  },
  { additionalProperties: false, title: "RulesBundleFile" },
);

/** GET /review/v1/assignments/{assignment_id}/rules: the instance's rules bundle v1. */
export const RulesBundleResponse = Type.Object(
  {
    schema_version: Type.Literal("rules-bundle/v1"),
    revision_id: Sha256Hex,
    files: Type.Array(RulesBundleFile, { maxItems: 128 }),
  },
  { title: "RulesBundleResponse" },
);

/**
 * review/deployed (rule 6): immutable deployment metadata, written once; not evidence. Bounded
 * strings: the VM id and receipt are the provider's, the digests the deployed image and compose.
 */
export const ReviewDeployedRequest = Type.Object(
  {
    assignment_id: MintedId,
    vm_id: Type.String({ pattern: "^[A-Za-z0-9._:/-]{1,128}$" }),
    provider_receipt: Type.String({ minLength: 1, maxLength: 4096 }),
    image_digest: Type.String({ pattern: "^sha256:[0-9a-f]{64}$" }),
    compose_hash: Sha256Hex,
  },
  { additionalProperties: false, title: "ReviewDeployedRequest" },
);

/** review/deployed's answer: the assignment's state and the metadata as recorded. */
export const ReviewDeployedResponse = Type.Object(
  {
    assignment_id: MintedId,
    state: ReviewAssignmentState,
    record: ReviewDeployedRequest,
  },
  { additionalProperties: false, title: "ReviewDeployedResponse" },
);

/** model-call-started (rule 18): the one planned model request, bound before any connection. */
export const ReviewModelCallRequest = Type.Object(
  {
    request_id: MintedId,
    provider: Type.String({ pattern: "^[a-z0-9][a-z0-9._-]{0,63}$" }),
    model: Type.String({ pattern: "^[A-Za-z0-9._:/@+-]{1,128}$" }),
    // A DNS name (no scheme, port or path): where the one connection will go.
    endpoint_host: Type.String({
      maxLength: 253,
      pattern:
        "^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$",
    }),
    request_sha256: Sha256Hex,
  },
  { additionalProperties: false, title: "ReviewModelCallRequest" },
);

/** model-call-started's answer. */
export const ReviewModelCallResponse = Type.Object(
  {
    assignment_id: MintedId,
    state: ReviewAssignmentState,
    record: ReviewModelCallRequest,
  },
  { additionalProperties: false, title: "ReviewModelCallResponse" },
);

/** failure (rule 19): one bounded failure record, without a report. */
export const ReviewFailureRequest = Type.Object(
  {
    reason_code: Type.String({ pattern: "^[a-z][a-z0-9_]{0,63}$" }),
    message: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false, title: "ReviewFailureRequest" },
);

/** failure's answer: the assignment is now error; its capability is revoked. */
export const ReviewFailureResponse = Type.Object(
  {
    assignment_id: MintedId,
    state: Type.Literal("error"),
    record: ReviewFailureRequest,
  },
  { additionalProperties: false, title: "ReviewFailureResponse" },
);

// ---------------------------------------------------------------------------------------------
// The attested review report (review envelope v1) and its receipt. docs/challenges/agent-eval.md
// ("The review envelope") explains every field and the order the service verifies them in.

const EvidenceName = Type.String({ pattern: "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$" });
const CheckId = Type.String({ pattern: "^[a-z][a-z0-9_.-]{0,63}$" });

/** One finding of the review: which check, how severe, where, and why. */
export const ReviewFinding = Type.Object(
  {
    check_id: CheckId,
    severity: Type.Union([
      Type.Literal("info"),
      Type.Literal("warning"),
      Type.Literal("escalate"),
      Type.Literal("block"),
    ]),
    path: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
    message: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false, title: "ReviewFinding" },
);

/** An evidence object the core commits to: the envelope's `evidence` carries its bytes. */
export const ReviewEvidenceRef = Type.Object(
  {
    name: EvidenceName,
    media_type: Type.String({ pattern: "^[a-z0-9][a-z0-9.+-]{0,63}/[a-z0-9][a-z0-9.+-]{0,63}$" }),
    length: Type.Integer({ minimum: 0, maximum: MAX_EVIDENCE_OBJECT_BYTES }),
    sha256: Sha256Hex,
  },
  { additionalProperties: false, title: "ReviewEvidenceRef" },
);

/**
 * What the review VM concluded, bound to one assignment: the envelope's `review_digest` is the
 * sha256 hex of its RFC 8785 canonical JSON, and the quote's report_data binds the assignment
 * digest, session, nonce, issue time and `reported_at`.
 */
export const ReviewCore = Type.Object(
  {
    schema_version: Type.Literal("review-core/v1"),
    assignment_id: MintedId,
    session_id: MintedId,
    assignment_digest: Sha256Hex,
    artifact_sha256: Sha256Hex,
    rules_revision_id: Sha256Hex,
    verdict: Type.Union([Type.Literal("allow"), Type.Literal("reject"), Type.Literal("escalate")]),
    summary: Type.String({ maxLength: 2048 }),
    findings: Type.Array(ReviewFinding, { maxItems: 256 }),
    // The request bound by model-call-started (always: a report follows it), and the sha256 of
    // what came back (null when no model was configured and the request was never sent).
    model_call: Type.Object(
      {
        request_id: MintedId,
        request_sha256: Sha256Hex,
        response_sha256: Type.Union([Sha256Hex, Type.Null()]),
      },
      { additionalProperties: false },
    ),
    evidence: Type.Array(ReviewEvidenceRef, { maxItems: MAX_EVIDENCE_OBJECTS }),
    reviewer: Type.Object(
      {
        name: Type.String({ pattern: "^[a-z0-9][a-z0-9._-]{0,63}$" }),
        version: Type.String({ pattern: "^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$" }),
      },
      { additionalProperties: false },
    ),
    reported_at: Timestamp,
  },
  { additionalProperties: false, title: "ReviewCore" },
);

/** One entry of the TD's runtime event log (src/attestation/event-log.ts). */
export const EventLogEntry = Type.Object(
  {
    imr: Type.Integer({ minimum: 0, maximum: 3 }),
    event: Type.String({ minLength: 1, maxLength: 128 }),
    digest: Sha384Hex,
  },
  { additionalProperties: false, title: "EventLogEntry" },
);

/** The quote and what it attests: the event log, the MRTD it claims, the VM's shape. */
export const ReviewAttestation = Type.Object(
  {
    // base64 of the TDX quote v4 bytes (at most 64 KiB decoded).
    quote: Type.String({ minLength: 4, maxLength: 87384, pattern: "^[A-Za-z0-9+/]+={0,2}$" }),
    event_log: Type.Array(EventLogEntry, { maxItems: 64 }),
    measurement: Sha384Hex,
    vm_config: Type.Object(
      {
        vcpus: Type.Integer({ minimum: 1, maximum: 1024 }),
        memory_mib: Type.Integer({ minimum: 1, maximum: 16_777_216 }),
        image_digest: Type.String({ pattern: "^sha256:[0-9a-f]{64}$" }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, title: "ReviewAttestation" },
);

/** One evidence object's bytes, named as in the core's `evidence`. */
export const ReviewEvidenceObject = Type.Object(
  {
    name: EvidenceName,
    content_b64: Type.String({
      maxLength: Math.ceil(MAX_EVIDENCE_OBJECT_BYTES / 3) * 4,
      pattern: "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$",
    }),
  },
  { additionalProperties: false, title: "ReviewEvidenceObject" },
);

/** POST /review/v1/assignments/{id}/report: the review envelope v1. */
export const ReviewEnvelope = Type.Object(
  {
    schema_version: Type.Literal("review-envelope/v1"),
    domain: Type.Literal("platform/agent-eval/review-envelope/v1"),
    review_core: ReviewCore,
    review_digest: Sha256Hex,
    report_data_hex: Type.String({ pattern: "^[0-9a-f]{128}$" }),
    attestation: ReviewAttestation,
    evidence: Type.Array(ReviewEvidenceObject, { maxItems: MAX_EVIDENCE_OBJECTS }),
  },
  { additionalProperties: false, title: "ReviewEnvelope" },
);

/** The definitive outcome of verifying a report (absent while the verifier is unavailable). */
export const ReviewVerification = Type.Object(
  {
    status: Type.Union([Type.Literal("verified"), Type.Literal("rejected")]),
    // The verdict the assignment took: the core's verdict when verified, else reject.
    outcome: Type.Union(DECIDED_ASSIGNMENT_STATES.map((state) => Type.Literal(state))),
    // Why verification refused the report (null when verified).
    code: Type.Union([Type.String({ pattern: "^[a-z][a-z0-9_]{0,63}$" }), Type.Null()]),
    message: Type.Union([Type.String({ maxLength: 1024 }), Type.Null()]),
    verifier: Type.Union([Type.Literal("dcap"), Type.Literal("dev")]),
    // false for the development verifier: its quotes can be forged by anyone.
    confidential: Type.Boolean(),
    measurement: Type.Union([Sha384Hex, Type.Null()]),
  },
  { additionalProperties: false, title: "ReviewVerification" },
);

/** The report route's answer: 202 on first receipt, 200 on an identical replay. */
export const ReviewReportReceiptResponse = Type.Object(
  {
    assignment_id: MintedId,
    session_id: MintedId,
    state: ReviewAssignmentState,
    // sha256 hex of the received envelope's canonical JSON: what "identical" means.
    receipt_sha256: Sha256Hex,
    review_digest: Sha256Hex,
    received_at: Timestamp,
    verification: ReviewVerification,
  },
  { additionalProperties: false, title: "ReviewReportReceiptResponse" },
);

// ---------------------------------------------------------------------------------------------
// Review reads: the owner's history (rule 7), the public report (rule 8) and the internal report
// (rule 9) share one record; each view fills the fields it may show (docs: "Review reads").

/** The reads' paging: at most 16 items a page (default 10), a signed cursor to go on. */
export const ReviewAuditQuery = Type.Object({
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 16, default: 10 })),
});

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);
const JsonRecord = Type.Record(Type.String(), Type.Unknown());

/** One assignment of a review session, as one view shows it. */
export const ReviewAuditItem = Type.Object(
  {
    assignment_id: MintedId,
    attempt: Type.Integer({ minimum: 1, maximum: 16 }),
    state: ReviewAssignmentState,
    assignment_digest: Sha256Hex,
    issued_at: Timestamp,
    reported_at: Nullable(Timestamp),
    verified_at: Nullable(Timestamp),
    // The verification's outcome and refusal code (null before an outcome).
    outcome: Nullable(Type.Union(DECIDED_ASSIGNMENT_STATES.map((state) => Type.Literal(state)))),
    verification_code: Nullable(Type.String()),
    review_digest: Nullable(Sha256Hex),
    receipt_sha256: Nullable(Sha256Hex),
    // history and internal
    predecessor_id: Type.Optional(Nullable(MintedId)),
    expires_at: Type.Optional(Timestamp),
    deployed_at: Type.Optional(Nullable(Timestamp)),
    model_call_at: Type.Optional(Nullable(Timestamp)),
    failed_at: Type.Optional(Nullable(Timestamp)),
    failure_reason_code: Type.Optional(Nullable(Type.String())),
    // public report
    verdict: Type.Optional(
      Nullable(
        Type.Union([Type.Literal("allow"), Type.Literal("reject"), Type.Literal("escalate")]),
      ),
    ),
    verifier: Type.Optional(Nullable(Type.Union([Type.Literal("dcap"), Type.Literal("dev")]))),
    confidential: Type.Optional(Nullable(Type.Boolean())),
    measurement: Type.Optional(Nullable(Sha384Hex)),
    findings: Type.Optional(
      Type.Array(
        Type.Object(
          { check_id: CheckId, severity: Type.String() },
          { additionalProperties: false },
        ),
      ),
    ),
    evidence: Type.Optional(
      Type.Array(
        Type.Object(
          {
            object_ref: Type.Optional(Type.String()),
            name: EvidenceName,
            media_type: Type.String(),
            length: Type.Integer({ minimum: 0 }),
            sha256: Sha256Hex,
          },
          { additionalProperties: false },
        ),
      ),
    ),
    // internal report: the full immutable records
    core: Type.Optional(ReviewAssignmentCore),
    deployed: Type.Optional(Nullable(JsonRecord)),
    model_call: Type.Optional(Nullable(JsonRecord)),
    failure: Type.Optional(Nullable(JsonRecord)),
    envelope: Type.Optional(Nullable(JsonRecord)),
    verification: Type.Optional(Nullable(ReviewVerification)),
  },
  { additionalProperties: false, title: "ReviewAuditItem" },
);

/** review/history, review/report and the internal review report (ReviewAuditResponse). */
export const ReviewAuditResponse = Type.Object(
  {
    schema_version: Type.Literal("review-audit/v1"),
    view: Type.Union([
      Type.Literal("history"),
      Type.Literal("public_report"),
      Type.Literal("internal_report"),
    ]),
    submission_id: Type.Integer({ minimum: 1 }),
    // Null while the submission has no review session.
    session_id: Nullable(MintedId),
    items: Type.Array(ReviewAuditItem, { maxItems: 16 }),
    // Pass as `cursor` for the next page; null on the last one.
    next_cursor: Nullable(Type.String({ maxLength: 512 })),
    // internal report: sha256 hex of the canonical items, so a stored copy can be checked.
    bundle_sha256: Type.Optional(Sha256Hex),
  },
  { additionalProperties: false, title: "ReviewAuditResponse" },
);

// ---------------------------------------------------------------------------------------------
// The miner's environment and launch (docs: "Miner env and launch").

/** PUT env: the whole set, replacing the previous one. */
export const MinerEnvUpdateRequest = Type.Object(
  {
    env: Type.Record(
      Type.String({ pattern: ENV_KEY_PATTERN }),
      Type.String({ maxLength: MAX_ENV_VALUE_BYTES }),
      { maxProperties: MAX_ENV_KEYS, additionalProperties: false },
    ),
  },
  { additionalProperties: false, title: "MinerEnvUpdateRequest" },
);

/** What the env routes show: never a value. */
export const MinerEnvMetadataResponse = Type.Object(
  {
    submission_id: Type.Integer({ minimum: 1 }),
    // unset: nothing yet (launch answers 412); set: keys below; empty: confirmed none.
    status: Type.Union([Type.Literal("unset"), Type.Literal("set"), Type.Literal("empty")]),
    keys: Type.Array(
      Type.Object(
        { name: Type.String(), size: Type.Integer({ minimum: 0 }), sha256: Sha256Hex },
        { additionalProperties: false },
      ),
    ),
    total_bytes: Type.Integer({ minimum: 0 }),
    revision: Type.Integer({ minimum: 0 }),
    locked: Type.Boolean(),
    updated_at: Type.Union([Timestamp, Type.Null()]),
  },
  { additionalProperties: false, title: "MinerEnvMetadataResponse" },
);

/** launch: the miner's go-ahead, recorded once; the env it locked. */
export const MinerEnvLaunchResponse = Type.Object(
  {
    submission_id: Type.Integer({ minimum: 1 }),
    launched_at: Timestamp,
    env_status: Type.Union([Type.Literal("set"), Type.Literal("empty")]),
    env_revision: Type.Integer({ minimum: 1 }),
    // Where the submission stands: eval/prepare also needs a verified allow.
    submission_state: Type.String(),
  },
  { additionalProperties: false, title: "MinerEnvLaunchResponse" },
);

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
