/**
 * @platform/challenge-sdk/testing: run a challenge on a fresh test database in one call, sign as
 * a miner, act as the master, and the conformance suite every challenge runs on itself. Kept
 * out of the main entry so a challenge's runtime code never loads vitest.
 */

// Which databases to run a suite on (real PostgreSQL when it answers, and embedded PGlite), so a
// challenge's tests need nothing from @platform/core directly.
export { type Backend, testBackends } from "@platform/core";
export {
  type ConformanceOptions,
  type ConformanceRequest,
  type ConformanceSubject,
  runChallengeConformance,
} from "./challenge-conformance.js";
export { createMinerKey, type MinerKey } from "./miner-key.js";
export {
  type BridgeHeaderOptions,
  type SignedFetchInit,
  type StartTestChallengeOptions,
  startTestChallenge,
  type TestChallenge,
} from "./start-test-challenge.js";
