/**
 * The telemetry session credential (rule 15): the run bearer AND `X-Telemetry-Session`, the id
 * telemetry-session answered once. Only the id's HMAC is stored (a database read gives no
 * usable session); a session opens its own run only, and only until it expires (1 h).
 */
import { createHmac } from "node:crypto";
import { type AuthHook, HttpError, type Sql } from "@platform/challenge-sdk";
import type { AgentEvalState } from "../agent-eval-state.js";
import { deriveKey, KeyLabel } from "../crypto/index.js";
import type { Settings } from "../settings.js";

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

/** Whether `sessionId` is a live telemetry session of run `runId`. */
async function sessionIsLive(
  sql: Sql,
  input: { secretKey: Buffer; runId: string; sessionId: string },
): Promise<boolean> {
  if (!SESSION_ID.test(input.sessionId)) return false;
  const [session] = await sql<{ run_id: string }[]>`
    select run_id from eval_telemetry_sessions
    where id_mac = ${telemetrySessionMac(input.secretKey, input.sessionId)}
      and run_id = ${input.runId} and expires_at > now()`;
  return session !== undefined;
}

/**
 * The `auth` of the routes that need a telemetry session (after the route's `runBearer`):
 * X-Telemetry-Session must name a live session of the path's run, else 401
 * invalid_telemetry_session, before the body is read. Judged once: a session that expires while
 * the request runs ends with its next request.
 */
export const telemetrySessionAuth: AuthHook<Settings, AgentEvalState> = async ({
  sql,
  state,
  pathParams,
  request,
}) => {
  const runId = pathParams["eval_run_id"] ?? "";
  const sessionId = request.headers.get(TELEMETRY_SESSION_HEADER) ?? "";
  if (!(await sessionIsLive(sql, { secretKey: state.secretKey, runId, sessionId }))) {
    throw new HttpError(
      401,
      TELEMETRY_AUTH_CODES.invalidTelemetrySession,
      `X-Telemetry-Session must carry a live telemetry session of eval run ${runId}.`,
    );
  }
};
