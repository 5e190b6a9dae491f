/**
 * @platform/challenge-sdk/testing: run a challenge on a fresh test database in one call, sign as
 * a miner, act as the master, the conformance suite every challenge runs on itself, and an
 * OpenAPI-driven fuzz suite for any server (a challenge's or the master's), and a byte-level ZIP
 * writer for hostile archives, a fresh migrated database for a test (`testDatabase`),
 * `waitFor`, and `startPlatformDev` (the whole local platform, from the project's own CLI). Kept out of the main entry so a challenge's runtime code never
 * loads vitest.
 */

// Which databases to run a suite on (real PostgreSQL when it answers, and embedded PGlite), so a
// challenge's tests need nothing from @platform/core directly.
export type { Backend } from "@platform/core";
export { testBackends } from "@platform/core/testing";
export { writeZip, type ZipEntrySpec } from "../bundle/write-zip.js";
export { runChallengeConformance } from "./challenge-conformance.js";
export {
  type ConformanceCheckId,
  type ConformanceCheckResult,
  type ConformanceInput,
  type ConformanceOptions,
  type ConformanceReport,
  type ConformanceRequest,
  type ConformanceSubject,
  checkChallengeConformance,
} from "./check-challenge-conformance.js";
export {
  challengeFuzzOptions,
  type FuzzCredential,
  type FuzzFinding,
  type FuzzFindingKind,
  type FuzzOpenApiOptions,
  type FuzzReport,
  type FuzzRequest,
  type FuzzRouteCoverage,
  fuzzOpenApi,
  summarizeFuzzReport,
} from "./fuzz-openapi.js";
export { createMinerKey, type MinerKey } from "./miner-key.js";
export { type FuzzTarget, runOpenApiFuzz } from "./run-openapi-fuzz.js";
export {
  type PlatformDev,
  type PlatformDevReady,
  type StartPlatformDevOptions,
  startPlatformDev,
} from "./start-platform-dev.js";
export {
  type BridgeHeaderOptions,
  type SignedFetchInit,
  type StartTestChallengeOptions,
  startTestChallenge,
  type TestChallenge,
} from "./start-test-challenge.js";
export { type TestDatabaseOptions, testDatabase } from "./test-database.js";
export { type WaitForOptions, waitFor } from "./wait-for.js";
