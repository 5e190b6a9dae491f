/**
 * @platform/challenge-sdk: the toolkit a challenge author installs. `defineChallenge` (routes of
 * every kind, miner and bridge identity, config, weights), the proxy contract, weights helpers;
 * the testing kit is the separate entry `@platform/challenge-sdk/testing`.
 */

export {
  type Database,
  HttpError,
  json,
  type Logger,
  loadMigrations,
  type Migration,
  type Sql,
  type SseEvent,
  sseResponse,
  type TransactionSql,
} from "@platform/core";
// Schemas are written with the SDK's own TypeBox, so authors never mix two copies.
export { type Static, type TObject, type TSchema, Type } from "@sinclair/typebox";
export { type BearerCheck, bearerAuth } from "./bearer-auth.js";
export {
  BASE_SETTING_VARIABLES,
  type ChallengeSettings,
  ConfigError,
  type ConfigIssue,
  type ConfigOf,
  type LoadChallengeConfigOptions,
  loadChallengeConfig,
  MIN_CHALLENGE_TOKEN_LENGTH,
} from "./challenge-config.js";
export type {
  AuthHook,
  BridgeContext,
  BridgeMiner,
  BridgeRoute,
  ChallengeBodySpec,
  ChallengeContext,
  ChallengeRouteInfo,
  ChallengeRouter,
  IdentityOptions,
  InternalRoute,
  PublicRoute,
  RequestContext,
  RequestInfo,
  RouteAccess,
  RouteOptions,
  SignedContext,
  SignedRoute,
  VerifiedMiner,
} from "./challenge-router.js";
export {
  type Challenge,
  type ChallengeDefinition,
  type ChallengeRuntime,
  defineChallenge,
  GET_WEIGHTS_PATH,
  type InitOptions,
  type RunningChallenge,
  type StartOptions,
  type WeightsResult,
} from "./define-challenge.js";
// The job queue (Postgres, leases, fenced completion) and its workers: docs/jobs-and-tasks.md.
export {
  type BackoffOptions,
  type ClaimedJob,
  type ClaimOptions,
  createJobQueue,
  type EnqueueOptions,
  type EnqueueResult,
  type FailOptions,
  type FailResult,
  type Job,
  type JobContext,
  JobError,
  type JobErrorOptions,
  type JobHandler,
  type JobLease,
  type JobOutcome,
  type JobQueue,
  type JobQueueOptions,
  type JobStats,
  type JobStatus,
  jobQueueMigrations,
  LeaseLostError,
  type ListJobsOptions,
  migrateJobQueue,
  type ProcessedJob,
  type ProcessNextOptions,
  processNext,
  runWorker,
  type WorkerEvent,
  type WorkerOptions,
  WorkerStoppingError,
} from "./jobs/index.js";
export { decodeJsonBody } from "./json-body.js";
export { type MinerRequest, verifyMinerRequest } from "./miner-request.js";
export {
  NONCE_RETENTION_SECONDS,
  pruneNonces,
  type Queryable,
  reserveNonce,
} from "./nonce-store.js";
export { normalizeWeights } from "./normalize-weights.js";
export {
  isInternalPath,
  isProxiedRequest,
  PLATFORM_HEADERS,
  proxyPathPrefix,
  SLUG_HEADERS,
} from "./proxy-contract.js";
// How the master's proxy reads and blocks a path (one implementation, the master imports it).
export {
  BLOCKED_PROXY_ROOTS,
  isBlockedProxyPath,
  isBlockedProxySegments,
  plainProxySegment,
  proxySegmentKey,
  resolveProxyPath,
  splitProxyTarget,
} from "./proxy-contract-path.js";
export {
  type RateLimitResult,
  type RateLimitRule,
  type RateLimitTake,
  releaseRateLimit,
  takeRateLimit,
} from "./rate-limit.js";
export { type RunChallengeOptions, runChallenge } from "./run-challenge.js";
// The task runner (broker or local Docker) and the hardened container spec both build on.
export {
  AttachedRunError,
  type AttachedRunOptions,
  type AttachedRunOutcome,
  type BrokerTaskRunnerOptions,
  brokerTaskRunner,
  type CapturedOutput,
  checkTaskFiles,
  checkTaskLabels,
  DEFAULT_FILE_CAPS,
  DOCKER_RUNNER_LABEL,
  type DockerTaskRunner,
  type DockerTaskRunnerOptions,
  dockerTaskRunner,
  HARDENED_LIMITS,
  type HardenedContainerContext,
  hardenedContainerOptions,
  isRootUser,
  NOBODY,
  OutputCapture,
  type PlacedFile,
  type ResolvedTaskLimits,
  refuseWeakening,
  resolveTaskLimits,
  resolveTaskUser,
  runAttachedContainer,
  TASK_LABELS,
  type Task,
  TaskAbortedError,
  TaskAuthError,
  TaskError,
  type TaskErrorOptions,
  type TaskEvent,
  type TaskFile,
  type TaskFileCaps,
  type TaskLimitPolicy,
  type TaskLimits,
  TaskQuotaError,
  TaskRejectedError,
  type TaskResult,
  type TaskRunner,
  type TaskRunOptions,
  TaskUnavailableError,
  taskFile,
  taskFilePathProblem,
  taskFilesArchive,
  WORKSPACE,
} from "./tasks/index.js";
export { SDK_VERSION } from "./version.js";
export {
  type ScoreEntry,
  type WeightsFromScoresOptions,
  weightsFromScores,
} from "./weights-from-scores.js";
