// How a request finds the instance (database, config, token, state) it runs against: one
// challenge definition (one app, one route table) can serve several instances at once, e.g. a
// test suite per backend, so the instance travels with each request, never in module scope.
import { type HealthChecks, HttpError, type NoncePair, type ServerEnv } from "@platform/core";
import type { ChallengeMetrics } from "./_challenge-metrics.js";
import type { MinerVerifier } from "./_miner-request.js";
import type { ChallengeContext } from "./route-context.js";

export const INSTANCE = Symbol.for("@platform/challenge-sdk.instance");

export interface InstanceLink {
  context: ChallengeContext<unknown, unknown>;
  /** CHALLENGE_TOKEN; null only in development (allowNoToken). */
  token: string | null;
  /** What internal routes do when `token` is null: serve ("open") or answer 503. */
  internalWithoutToken: "open" | "unavailable";
  /** How signed requests are verified: on this thread, or through the verify pool. */
  verify: MinerVerifier;
  /** Spends a verified (hotkey, nonce) once in `sdk_nonces`: false for a replay. */
  spendNonce(pair: NoncePair): Promise<boolean>;
  /** Called after a nonce was spent: prunes old rows now and then. */
  maintain(): Promise<void>;
  /** Set once the instance closes: its database is gone, so requests are refused. */
  closed: boolean;
  /** The readiness checks behind GET /readyz (the database, and the author's). */
  health: HealthChecks;
  /** The instance's metrics, served at GET /internal/v1/metrics. */
  metrics: ChallengeMetrics;
}

export type InstanceEnv = ServerEnv & { [INSTANCE]?: InstanceLink };

/** The instance a request runs against; 503 `challenge_not_started` when there is none (or it closed). */
export function instanceOf(env: ServerEnv): InstanceLink {
  const link = (env as InstanceEnv)[INSTANCE];
  if (!link || link.closed) {
    throw new HttpError(503, "challenge_not_started", "The challenge is not running");
  }
  return link;
}
