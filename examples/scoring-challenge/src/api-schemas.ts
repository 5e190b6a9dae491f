/**
 * Every body this challenge takes or answers, as TypeBox: the routes validate with them and the
 * SDK publishes them in /openapi.json. Field names are the production service's (spec and
 * scoring-facts.md), so existing clients keep working.
 */
import { type Static, type TSchema, Type } from "@platform/challenge-sdk";
import { MAX_EPOCHS_LISTED } from "./epochs.js";

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Timestamp = Type.String({ format: "date-time" });
const Sha256 = Type.String({ pattern: "^[0-9a-f]{64}$" });

/** A bundle's file name: a plain name ending in .zip. */
export const BUNDLE_FILENAME = "^[A-Za-z0-9_][A-Za-z0-9_.-]{0,123}\\.zip$";

/** The submit body (signed, or the bridge's JSON form). */
export const SubmissionCreate = Type.Object(
  {
    filename: Type.String({ pattern: BUNDLE_FILENAME, description: "The bundle's name" }),
    code: Type.String({ description: "The bundle ZIP, base64 (at most 7.5 MiB of base64)" }),
    metadata: Type.Record(Type.String(), Type.Unknown(), {
      default: {},
      description: "Free-form notes kept with the submission (at most 16 KiB as JSON)",
    }),
  },
  { additionalProperties: false },
);
export type SubmissionCreate = Static<typeof SubmissionCreate>;

/** Where a submission is: pending -> running -> completed | failed | rejected | held. */
export const SubmissionState = Type.Union([
  Type.Literal("pending"),
  Type.Literal("running"),
  Type.Literal("completed"),
  Type.Literal("failed"),
  Type.Literal("rejected"),
  Type.Literal("held"),
]);
export type SubmissionState = Static<typeof SubmissionState>;

/** GET /v1/submissions/{id}, and the 201 of submit and bridge. */
export const SubmissionStatus = Type.Object({
  id: Type.String({ pattern: "^[0-9]+$" }),
  hotkey: Type.String(),
  epoch_id: Type.Integer({ minimum: 0 }),
  status: SubmissionState,
  code_hash: Sha256,
  filename: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
  error: Nullable(Type.String()),
  final_score: Nullable(Type.Number({ description: "anti_cheat_multiplier / (1 + bpb)" })),
  anti_cheat_multiplier: Nullable(Type.Number()),
  bpb: Nullable(Type.Number({ description: "Prequential bits per byte of the scored run" })),
  llm_gate: Type.Union([Type.Literal("required"), Type.Literal("off")], {
    description: "off: the operator ran without the LLM review when this bundle went through",
  }),
  q_arch: Nullable(Type.Number({ description: "Legacy; always null" })),
  q_recipe: Nullable(Type.Number({ description: "Legacy; always null" })),
  diversity_bonus: Nullable(Type.Number({ description: "Legacy; always null" })),
  penalty: Nullable(Type.Number({ description: "Legacy; always null" })),
});
export type SubmissionStatus = Static<typeof SubmissionStatus>;

/** One day of GET /v1/submissions/history (UTC). */
export const HistoryDay = Type.Object({
  date: Type.String({ pattern: "^\\d{4}-\\d{2}-\\d{2}$" }),
  count: Type.Integer({ minimum: 0 }),
});
export const History = Type.Array(HistoryDay);

/** GET /v1/leaderboard. */
export const Leaderboard = Type.Object({
  epoch_id: Type.Integer({ minimum: 0 }),
  entries: Type.Array(
    Type.Object({
      rank: Type.Integer({ minimum: 1 }),
      hotkey: Type.String(),
      score: Type.Number(),
      submission_id: Type.String({ pattern: "^[0-9]+$" }),
    }),
  ),
});
export type Leaderboard = Static<typeof Leaderboard>;

/** GET /v1/architectures: one family per distinct architecture.py. */
export const ArchitectureEntry = Type.Object({
  architecture_id: Type.String({ description: "sha256 of architecture.py" }),
  first_submission_id: Type.String(),
  first_hotkey: Type.String(),
  submissions: Type.Integer({ minimum: 1 }),
  variants: Type.Integer({ minimum: 1, description: "Distinct training.py files with it" }),
  best_score: Nullable(Type.Number()),
  created_at: Timestamp,
});
export const Architectures = Type.Array(ArchitectureEntry);

/** GET /v1/training-variants: one per distinct (architecture.py, training.py) pair. */
export const TrainingVariantEntry = Type.Object({
  variant_id: Type.String({ description: "sha256 of training.py" }),
  architecture_id: Type.String(),
  first_submission_id: Type.String(),
  first_hotkey: Type.String(),
  submissions: Type.Integer({ minimum: 1 }),
  best_score: Nullable(Type.Number()),
  created_at: Timestamp,
});
export const TrainingVariants = Type.Array(TrainingVariantEntry);

/** GET /v1/epochs/current. */
export const CurrentEpoch = Type.Object({
  epoch_id: Type.Integer({ minimum: 0 }),
  epoch_seconds: Type.Integer({ minimum: 1 }),
});

/** GET /v1/epochs: newest first. */
export const Epochs = Type.Array(
  Type.Object({
    id: Type.Integer({ minimum: 0 }),
    starts_at: Timestamp,
    ends_at: Timestamp,
    status: Type.Union([Type.Literal("current"), Type.Literal("closed")]),
  }),
  { maxItems: MAX_EPOCHS_LISTED },
);

/** The pipeline levels an eval-job row tracks. */
export const EvalLevel = Type.Union([
  Type.Literal("gates"),
  Type.Literal("llm"),
  Type.Literal("run"),
]);
export type EvalLevel = Static<typeof EvalLevel>;

/** GET /v1/health/eval-jobs: the most recent stage attempts. */
export const EvalJobs = Type.Array(
  Type.Object({
    id: Type.String(),
    submission_id: Type.String(),
    level: EvalLevel,
    status: Type.Union([
      Type.Literal("pending"),
      Type.Literal("running"),
      Type.Literal("completed"),
      Type.Literal("failed"),
    ]),
    attempts: Type.Integer({ minimum: 0 }),
    /** Attempts of this level that failed on the platform's side (retried, never the bundle's). */
    failures: Type.Integer({ minimum: 0 }),
    /** The last such failure: `code: sentence`, at most 2,000 characters; null when none. */
    last_error: Type.Union([Type.String(), Type.Null()]),
    created_at: Timestamp,
    updated_at: Timestamp,
  }),
);

/** GET /v1/gpu/status. */
export const GpuStatus = Type.Object({
  total_gpus: Type.Integer({ minimum: 0 }),
  active_leases: Type.Integer({ minimum: 0 }),
  by_status: Type.Object({
    queued: Type.Integer({ minimum: 0 }),
    active: Type.Integer({ minimum: 0 }),
    released: Type.Integer({ minimum: 0 }),
  }),
  by_tier: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
    description: "Live (queued or active) leases per tier",
  }),
});
export type GpuStatus = Static<typeof GpuStatus>;

/** POST /internal/v1/worker/process-next. */
export const ProcessNextResult = Type.Object({
  submission_id: Nullable(Type.String({ pattern: "^[0-9]+$" })),
});

/** A submission id in a path. */
export const SubmissionIdParams = Type.Object({
  submission_id: Type.String({ pattern: "^[1-9][0-9]{0,17}$" }),
});
