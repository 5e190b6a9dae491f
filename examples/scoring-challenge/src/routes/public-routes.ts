/**
 * The public read routes: a submission's status, daily history, the leaderboard, the legacy
 * listings, epochs, eval-job health and the GPU summary. Held bundles past their 24 h are
 * rejected lazily here, so a status read never shows a hold that has expired.
 */
import { type ChallengeRouter, databaseNow, HttpError, Type } from "@platform/challenge-sdk";
import {
  Architectures,
  CurrentEpoch,
  Epochs,
  EvalJobs,
  GpuStatus,
  History,
  Leaderboard,
  SubmissionIdParams,
  SubmissionStatus,
  TrainingVariants,
} from "../api-schemas.js";
import { currentEpoch, MAX_EPOCHS_LISTED, recentEpochs } from "../epochs.js";
import { MAX_EVAL_JOBS_LISTED, recentEvalJobs } from "../eval-jobs.js";
import { gpuStatus } from "../gpu-leases.js";
import { HISTORY_DAYS, submissionHistory } from "../history.js";
import { leaderboard } from "../leaderboard.js";
import { architectureFamilies, LISTING_LIMIT, trainingVariants } from "../legacy-listings.js";
import type { ScoringState } from "../scoring-state.js";
import type { Settings } from "../settings.js";
import { expireHeld, readSubmission } from "../submission-store.js";

const Limit = (max: number, fallback: number) =>
  Type.Integer({ minimum: 1, maximum: max, default: fallback });

/** Register the public routes. */
export function publicRoutes(router: ChallengeRouter<Settings, ScoringState>): void {
  // Before /v1/submissions/:submission_id, which would otherwise take "history" as an id.
  router.public({
    method: "GET",
    path: "/v1/submissions/history",
    summary: "Submissions accepted per UTC day over the last `days` days, oldest first",
    tags: ["submissions"],
    query: Type.Object({
      days: Type.Integer({
        minimum: HISTORY_DAYS.min,
        maximum: HISTORY_DAYS.max,
        default: HISTORY_DAYS.default,
      }),
    }),
    responses: { 200: { description: "One entry per day", schema: History } },
    handler: ({ sql, query }) => submissionHistory(sql, query.days),
  });

  router.public({
    method: "GET",
    path: "/v1/submissions/:submission_id",
    summary: "A submission's status record",
    tags: ["submissions"],
    params: SubmissionIdParams,
    responses: { 200: { description: "The status record", schema: SubmissionStatus } },
    handler: async ({ sql, params }) => {
      await expireHeld(sql);
      const status = await readSubmission(sql, params.submission_id);
      if (!status) {
        throw new HttpError(404, "submission_not_found", `no submission ${params.submission_id}`);
      }
      return status;
    },
  });

  router.public({
    method: "GET",
    path: "/v1/leaderboard",
    summary: "An epoch's leaderboard (the current one by default): each hotkey's best score",
    description:
      "Completed submissions of the epoch, one per hotkey, by final_score (on a 1e-9 grid), " +
      "ties to the earliest accepted, then the smallest id.",
    tags: ["scores"],
    query: Type.Object({ epoch_id: Type.Optional(Type.Integer({ minimum: 0 })) }),
    responses: { 200: { description: "Ranked entries", schema: Leaderboard } },
    handler: async ({ sql, query, state }) =>
      leaderboard(
        sql,
        query.epoch_id ?? currentEpoch(await databaseNow(sql), state.options.epochSeconds).epoch_id,
      ),
  });

  router.public({
    method: "GET",
    path: "/v1/architectures",
    summary: "Legacy: architecture families (distinct architecture.py), newest first",
    tags: ["legacy"],
    query: Type.Object({ limit: Limit(LISTING_LIMIT.max, LISTING_LIMIT.default) }),
    responses: { 200: { description: "Families", schema: Architectures } },
    handler: ({ sql, query }) => architectureFamilies(sql, query.limit),
  });

  router.public({
    method: "GET",
    path: "/v1/training-variants",
    summary: "Legacy: training variants (distinct training.py per family), newest first",
    tags: ["legacy"],
    query: Type.Object({
      architecture_id: Type.Optional(Type.String({ pattern: "^[0-9a-f]{64}$" })),
      limit: Limit(LISTING_LIMIT.max, LISTING_LIMIT.default),
    }),
    responses: { 200: { description: "Variants", schema: TrainingVariants } },
    handler: ({ sql, query }) => trainingVariants(sql, query.architecture_id ?? null, query.limit),
  });

  router.public({
    method: "GET",
    path: "/v1/epochs/current",
    summary: "The current epoch: floor(unix seconds / EPOCH_SECONDS)",
    tags: ["epochs"],
    responses: { 200: { description: "The current epoch", schema: CurrentEpoch } },
    handler: async ({ sql, state }) =>
      currentEpoch(await databaseNow(sql), state.options.epochSeconds),
  });

  router.public({
    method: "GET",
    path: "/v1/epochs",
    summary: "Recent epochs, the current one first",
    tags: ["epochs"],
    query: Type.Object({ limit: Limit(MAX_EPOCHS_LISTED, MAX_EPOCHS_LISTED) }),
    responses: { 200: { description: "Epochs", schema: Epochs } },
    handler: async ({ sql, query, state }) =>
      recentEpochs(await databaseNow(sql), state.options.epochSeconds, query.limit),
  });

  router.public({
    method: "GET",
    path: "/v1/health/eval-jobs",
    summary: "The most recent eval-job rows (one per submission and pipeline level)",
    tags: ["health"],
    query: Type.Object({ limit: Limit(MAX_EVAL_JOBS_LISTED, 50) }),
    responses: { 200: { description: "Eval jobs, most recently updated first", schema: EvalJobs } },
    handler: ({ sql, query }) => recentEvalJobs(sql, query.limit),
  });

  router.public({
    method: "GET",
    path: "/v1/gpu/status",
    summary: "GPU leases: the pool, the active leases, counts by status and by tier",
    tags: ["health"],
    responses: { 200: { description: "The GPU summary", schema: GpuStatus } },
    handler: ({ sql, state }) => gpuStatus(sql, state.options.gpu.count),
  });
}
