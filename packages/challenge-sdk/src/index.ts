/**
 * @platform/challenge-sdk: what a challenge author reaches for. `defineChallenge` (settings,
 * state, routes of every kind, weights), `runChallenge`, TypeBox, errors and responses, weights
 * helpers, secrets, a safe ZIP reader and the declared submission archive. The rest has its own entry: `/jobs` (the job queue and
 * workers), `/tasks` (running containers), `/testing` (the testing kit), and, for the master,
 * `/proxy-contract` and `/sandbox`. docs/challenge-sdk.md lists every export, one line each.
 */

// Errors, responses and secrets come from core, so a challenge needs no second platform package.
export {
  bearerToken,
  HttpError,
  type IssuedCapabilityToken,
  issueCapabilityToken,
  issueToken,
  json,
  type Logger,
  readCapabilityToken,
  type Sql,
  type SseEvent,
  secretsEqual,
  sseResponse,
  type TransactionSql,
  tokenMatchesHash,
  verifyCapabilityToken,
} from "@platform/core";
// Schemas are written with the SDK's own TypeBox, so authors never mix two copies.
export { type Static, type TObject, type TSchema, Type } from "@sinclair/typebox";
// Counting a miner's accepted submissions in the transaction that accepts them.
export { acceptWithinLimit } from "./accept-within-limit.js";
// Reading an uploaded ZIP safely: both reference challenges take one from miners.
export {
  type ReadZipOptions,
  readZip,
  ZIP_LIMITS,
  type ZipFileEntry,
  type ZipLimits,
} from "./bundle/read-zip.js";
// One archive declaration per challenge: its submission route and its workers read under it.
export {
  type CheckedArchive,
  readArchive,
  type SubmissionArchive,
} from "./bundle/submission-archive.js";
export { type ZipFileInput, zipFiles } from "./bundle/write-zip.js";
export type { ZipError, ZipErrorCode, ZipResult } from "./bundle/zip-error.js";
export { type ChallengeSettings, ConfigError, type ConfigOf } from "./challenge-config.js";
export type { ChallengeDefinition } from "./challenge-definition.js";
export type { ChallengeInstance, StartOptions } from "./challenge-instance.js";
export type { ChallengeRouteInfo, ChallengeRouter } from "./challenge-router.js";
// The database's clock: expiries and windows decided by it agree across replicas.
export { databaseNow } from "./database-now.js";
export { type Challenge, defineChallenge } from "./define-challenge.js";
export { normalizeWeights } from "./normalize-weights.js";
export type { RateLimitRule } from "./rate-limit.js";
export type {
  AuthHook,
  BearerCheck,
  BridgeContext,
  BridgeMiner,
  ChallengeContext,
  RequestContext,
  RequestInfo,
  SetupContext,
  SignedContext,
  SubmissionContext,
  SubmissionMiner,
  VerifiedMiner,
} from "./route-context.js";
export { type RunChallengeOptions, runChallenge } from "./run-challenge.js";
export type { RunningChallenge } from "./running-challenge.js";
export { GET_WEIGHTS_PATH, METRICS_PATH, type WeightsResult } from "./service-routes.js";
export { SDK_VERSION } from "./version.js";
export {
  type ScoreEntry,
  type WeightsFromScoresOptions,
  weightsFromScores,
} from "./weights-from-scores.js";
