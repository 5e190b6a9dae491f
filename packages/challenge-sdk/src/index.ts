/**
 * @platform/challenge-sdk: what a challenge author reaches for. `defineChallenge` (settings,
 * state, routes of every kind, weights), `runChallenge`, TypeBox, errors and responses, the
 * weights helper, the declared submission archive, the acceptance limit and the database's clock.
 * Every runtime name here is used by the template or a reference challenge (a test checks it).
 * The rest has its own entry: `/jobs` (the job queue and workers), `/tasks` (running
 * containers), `/zip` (reading and writing ZIPs safely), `/tokens` (credentials for a
 * challenge's workers), `/client` (the workers' and tools' HTTP client), `/testing` (the testing
 * kit), and, for the master, `/proxy-contract` and `/sandbox`. docs/challenge-sdk.md lists every
 * export, one line each.
 */

// Errors and responses come from core, so a challenge needs no second platform package.
export {
  HttpError,
  json,
  type Logger,
  type Sql,
  type SseEvent,
  sseResponse,
  type TransactionSql,
} from "@platform/core";
// Schemas are written with the SDK's own TypeBox, so authors never mix two copies.
export { type Static, type TObject, type TSchema, Type } from "@sinclair/typebox";
// Counting a miner's accepted submissions in the transaction that accepts them.
export { acceptWithinLimit } from "./accept-within-limit.js";
// One archive declaration per challenge: its submission route and its workers read under it.
export {
  type CheckedArchive,
  readArchive,
  type SubmissionArchive,
} from "./bundle/submission-archive.js";
export { type ChallengeSettings, ConfigError, type ConfigOf } from "./challenge-config.js";
export type { ChallengeDefinition } from "./challenge-definition.js";
export type { ChallengeInstance, StartOptions } from "./challenge-instance.js";
export type { ChallengeRouteInfo, ChallengeRouter } from "./challenge-router.js";
// The database's clock: expiries and windows decided by it agree across replicas.
export { databaseNow } from "./database-now.js";
export { type Challenge, defineChallenge } from "./define-challenge.js";
// Text a submission produced, cleaned of what PostgreSQL refuses before it is stored.
export { pgSafeJson, pgSafeText } from "./pg-safe-text.js";
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
export { GET_WEIGHTS_PATH } from "./service-paths.js";
export type { WeightsResult } from "./service-routes.js";
export {
  type ScoreEntry,
  type WeightsFromScoresOptions,
  weightsFromScores,
} from "./weights-from-scores.js";
