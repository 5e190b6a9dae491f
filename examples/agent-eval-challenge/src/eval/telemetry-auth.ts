/**
 * The telemetry session credential (rule 15): the run bearer AND `X-Telemetry-Session`, the id
 * telemetry-session answered once. Only the id's HMAC is stored (a database read gives no
 * usable session); a session opens its own run only, and only until it expires (1 h).
 */
import { createHmac } from "node:crypto";
import { HttpError, type TransactionSql } from "@platform/challenge-sdk";
import { deriveKey, KeyLabel } from "../crypto/index.js";
import { type AuthorizedRun, authorizeRun } from "./run-bearer.js";

export const TELEMETRY_SESSION_HEADER = "x-telemetry-session";

export const TELEMETRY_AUTH_CODES = {
  /** 401: no session header, a malformed one, another run's, an unknown or an expired one. */
  invalidTelemetrySession: "invalid_telemetry_session",
} as const;

// 32 random bytes, base64url without padding.
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/** The stored form of a session id. */
export function telemetrySessionMac(secretKey: Buffer, sessionId: string): string {
  return createHmac("sha256", deriveKey(secretKey, KeyLabel.telemetry))
    .update(sessionId, "utf8")
    .digest("hex");
}

/**
 * The run `runId` (locked `for update`) if `headers` carry its live run token (else 401 / 410,
 * as run-bearer.ts) and a live telemetry session of that run (else 401).
 */
export async function authorizeTelemetry(
  tx: TransactionSql,
  input: { headers: Headers; runId: string; secretKey: Buffer },
): Promise<AuthorizedRun> {
  const run = await authorizeRun(tx, input);
  const sessionId = input.headers.get(TELEMETRY_SESSION_HEADER) ?? "";
  const refused = new HttpError(
    401,
    TELEMETRY_AUTH_CODES.invalidTelemetrySession,
    `X-Telemetry-Session must carry a live telemetry session of eval run ${run.id}.`,
  );
  if (!SESSION_ID.test(sessionId)) throw refused;
  const [session] = await tx<{ run_id: string }[]>`
    select run_id from eval_telemetry_sessions
    where id_mac = ${telemetrySessionMac(input.secretKey, sessionId)}
      and run_id = ${run.id} and expires_at > now()`;
  if (!session) throw refused;
  return run;
}
