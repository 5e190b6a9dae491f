// How a request finds the runtime (database, config, token) it runs against: one challenge
// definition (one app, one route table) can serve several runtimes, e.g. a suite per backend.
import { HttpError, type ServerEnv } from "@platform/core";
import type { ChallengeContext } from "./challenge-router.js";

export const RUNTIME = Symbol.for("@platform/challenge-sdk.runtime");

export interface RuntimeState {
  context: ChallengeContext<unknown>;
  /** CHALLENGE_TOKEN; null only in development (allowNoToken). */
  token: string | null;
  /** Called after a nonce was spent: prunes old rows now and then. */
  maintain(): Promise<void>;
}

export type RuntimeEnv = ServerEnv & { [RUNTIME]?: RuntimeState };

export function runtimeOf(env: ServerEnv): RuntimeState {
  const state = (env as RuntimeEnv)[RUNTIME];
  if (!state) {
    throw new HttpError(503, "challenge_not_started", "The challenge is not started yet");
  }
  return state;
}
