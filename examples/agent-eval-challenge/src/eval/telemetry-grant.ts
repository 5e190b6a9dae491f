/**
 * The telemetry grant: what the submission's hotkey signs so that an eval worker may open a
 * telemetry session for one run, without ever holding the miner's mnemonic. The message is a
 * domain-tagged text naming the run AND its plan digest (a grant for one run opens no other),
 * the hotkey, a nonce (single use, kept in the database) and a timestamp (±300 s). Built here for
 * the service, the miner's tool and the tests alike, so the three never disagree on a byte.
 */
import type { Static } from "@platform/challenge-sdk";
import {
  DEFAULT_SIGNATURE_WINDOW_SECONDS,
  newNonce,
  type Sr25519Keypair,
  signMessage,
} from "@platform/challenge-sdk/signing";
import type { TelemetrySessionRequest } from "./eval-vm-schemas.js";

export const TELEMETRY_GRANT_DOMAIN = "platform/agent-eval/telemetry-session/v1";

/** How far a grant's timestamp may stray from the service's clock, either way. */
export const TELEMETRY_GRANT_SKEW_SECONDS = DEFAULT_SIGNATURE_WINDOW_SECONDS;

/** The body of POST telemetry-session (the worker gets it as TELEMETRY_GRANT, JSON). */
export type TelemetryGrant = Static<typeof TelemetrySessionRequest>;

export interface TelemetryGrantScope {
  runId: string;
  /** The plan digest eval/prepare returned (`plan_digest`). */
  planSha256: string;
  hotkey: string;
  nonce: string;
  timestamp: string;
}

/** The exact text a grant's signature covers. */
export function telemetryGrantMessage(scope: TelemetryGrantScope): string {
  return [
    TELEMETRY_GRANT_DOMAIN,
    `run:${scope.runId}`,
    `plan:${scope.planSha256}`,
    `hotkey:${scope.hotkey}`,
    `nonce:${scope.nonce}`,
    `timestamp:${scope.timestamp}`,
  ].join("\n");
}

/** A fresh grant for `runId` signed by `pair` (needs `await initCrypto()`). */
export function signTelemetryGrant(
  pair: Sr25519Keypair,
  run: { runId: string; planSha256: string },
  options: { nonce?: string; timestamp?: number } = {},
): TelemetryGrant {
  const nonce = options.nonce ?? newNonce();
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  const message = telemetryGrantMessage({ ...run, hotkey: pair.address, nonce, timestamp });
  return { hotkey_ss58: pair.address, signature: signMessage(pair, message), nonce, timestamp };
}
