/**
 * POST /evaluation/v1/runs/{id}/telemetry-session: the eval VM, holding the run token, opens a
 * telemetry session with a grant the submission's hotkey signed (telemetry-grant.ts). Checked in
 * order: the run token (401 / 410, the route's bearer), the run before any result (409 run_not_running), the
 * timestamp within ±300 s (401 timestamp_out_of_window), the hotkey is the submission's (403
 * hotkey_mismatch), the sr25519 signature (401 invalid_signature), then the nonce, unique per
 * hotkey for good (409 nonce_reused). Sessions live in the database, not in memory, so every
 * instance sees them and a restart keeps them; only the id's HMAC is stored. Opening the first
 * session starts the run (prepared -> running).
 */
import { randomBytes } from "node:crypto";
import { HttpError, type Sql, type Static } from "@platform/challenge-sdk";
import { verifySignature } from "@platform/challenge-sdk/signing";
import { reviewTransaction } from "../review/index.js";
import {
  type EvalRunState,
  PRE_RESULT_EVAL_RUN_STATES,
  transitionEvalRun,
} from "../state/index.js";
import type { TelemetrySessionResponse } from "./eval-vm-schemas.js";
import { lockRun } from "./run-bearer.js";
import { telemetrySessionMac } from "./telemetry-auth.js";
import {
  TELEMETRY_GRANT_SKEW_SECONDS,
  type TelemetryGrant,
  telemetryGrantMessage,
} from "./telemetry-grant.js";

/** How long a session lives (never past its run's expiry). */
export const TELEMETRY_SESSION_SECONDS = 60 * 60;

export const TELEMETRY_ERROR_CODES = {
  /** 409: the run already has a result (or ended): telemetry is over. */
  runNotRunning: "run_not_running",
  /** 401: the grant's timestamp is more than 300 s from the service's clock. */
  timestampOutOfWindow: "timestamp_out_of_window",
  /** 403: the grant's hotkey is not the submission's. */
  hotkeyMismatch: "hotkey_mismatch",
  /** 401: the signature is not the hotkey's over this run's grant message. */
  invalidSignature: "invalid_signature",
  /** 409: this hotkey already used this nonce for a grant. */
  nonceReused: "nonce_reused",
} as const;

export type TelemetrySessionAnswer = Static<typeof TelemetrySessionResponse>;

/** 409 run_not_running: the run's state (named) is past what `why` says needs a running run. */
export function runNotRunning(run: { id: string; state: string }, why: string): HttpError {
  return new HttpError(
    409,
    TELEMETRY_ERROR_CODES.runNotRunning,
    `Eval run ${run.id} is ${run.state}: ${why}`,
    { extra: { state: run.state } },
  );
}

export async function openTelemetrySession(
  sql: Sql,
  input: { runId: string; grant: TelemetryGrant; secretKey: Buffer },
): Promise<TelemetrySessionAnswer> {
  const { grant } = input;
  return reviewTransaction(sql, undefined, async (tx) => {
    const run = await lockRun(tx, input.runId);
    if (!(PRE_RESULT_EVAL_RUN_STATES as readonly string[]).includes(run.state)) {
      throw runNotRunning(run, "telemetry ended with its result.");
    }
    const [clock] = await tx<{ now: Date; hotkey: string }[]>`
      select now() as now, hotkey from submissions where id = ${run.submission_id}`;
    const skew = Math.abs(Number(grant.timestamp) - clock!.now.getTime() / 1000);
    if (!(skew <= TELEMETRY_GRANT_SKEW_SECONDS)) {
      throw new HttpError(
        401,
        TELEMETRY_ERROR_CODES.timestampOutOfWindow,
        `The grant's timestamp is more than ${TELEMETRY_GRANT_SKEW_SECONDS} s from the service's clock.`,
      );
    }
    if (grant.hotkey_ss58 !== clock!.hotkey) {
      throw new HttpError(
        403,
        TELEMETRY_ERROR_CODES.hotkeyMismatch,
        "The grant is not signed by the submission's hotkey.",
      );
    }
    const message = telemetryGrantMessage({
      runId: run.id,
      planSha256: run.plan_sha256,
      hotkey: grant.hotkey_ss58,
      nonce: grant.nonce,
      timestamp: grant.timestamp,
    });
    if (!verifySignature(message, grant.signature, grant.hotkey_ss58)) {
      throw new HttpError(
        401,
        TELEMETRY_ERROR_CODES.invalidSignature,
        "The signature is not the hotkey's over this run's telemetry grant.",
      );
    }
    const sessionId = randomBytes(32).toString("base64url");
    const [session] = await tx<{ expires_at: Date }[]>`
      insert into eval_telemetry_sessions
        (id_mac, run_id, hotkey, grant_nonce, grant_timestamp, opened_at, expires_at)
      select ${telemetrySessionMac(input.secretKey, sessionId)}, ${run.id}, ${grant.hotkey_ss58},
        ${grant.nonce}, to_timestamp(${Number(grant.timestamp)}), now(),
        least(now() + ${`${TELEMETRY_SESSION_SECONDS} seconds`}::interval, r.expires_at)
      from eval_runs r where r.id = ${run.id}
      on conflict (hotkey, grant_nonce) do nothing
      returning expires_at`;
    if (!session) {
      throw new HttpError(
        409,
        TELEMETRY_ERROR_CODES.nonceReused,
        "This grant's nonce was already used: sign a new grant.",
      );
    }
    let state: EvalRunState = run.state;
    if (state === "prepared") {
      state = (await transitionEvalRun(tx, { runId: run.id, event: "start", actor: "eval_vm" })).to;
    }
    return {
      run_id: run.id,
      session_id: sessionId,
      expires_at: session.expires_at.toISOString(),
      state,
    };
  });
}
