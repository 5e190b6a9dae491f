/**
 * The per-attempt bearer of the events route: `<attempt id>.<HMAC>` under its own purpose key
 * and capability domain, so it opens one attempt's log stream and nothing else (not the run's
 * routes, not another attempt's stream, not an internal route). Only its sha256 is stored.
 * Issuing is deterministic: opening the same trial again answers the same token, so an eval
 * worker that lost the answer can go on. The run's state revokes it (410 on the events route),
 * not a deleted hash.
 */
import { randomBytes } from "node:crypto";
import type { Sql } from "@platform/challenge-sdk";
import {
  CapabilityDomain,
  checkCapabilityToken,
  deriveKey,
  type IssuedCapabilityToken,
  issueCapabilityToken,
  KeyLabel,
  parseCapabilityToken,
} from "../crypto/index.js";

/** A fresh attempt id: 18 random bytes, base64url (like run ids). */
export function newAttemptId(): string {
  return randomBytes(18).toString("base64url");
}

/** The token of attempt `attemptId` (the same every time). */
export function attemptToken(secretKey: Buffer, attemptId: string): IssuedCapabilityToken {
  return issueCapabilityToken(
    deriveKey(secretKey, KeyLabel.attemptToken),
    CapabilityDomain.evalAttempt,
    attemptId,
  );
}

/** The path of an attempt's events route (what the attempts route answers as events_path). */
export function attemptEventsPath(attemptId: string): string {
  return `/internal/v1/evaluations/${attemptId}/events`;
}

const EVENTS_PATH = /\/internal\/v1\/evaluations\/([A-Za-z0-9_-]{1,64})\/events$/;

// Compared against when no row exists, so an unknown attempt costs the same comparisons.
const NO_STORED_HASH = "0".repeat(64);

/**
 * Whether `token` is the live token of the attempt the request's path names: a token of
 * another attempt, a run token (other domain and key), the challenge's internal token or a
 * review token all fail here. The run's state is judged later, in the route's transaction.
 */
export async function checkAttemptBearer(
  sql: Sql,
  input: { secretKey: Buffer; url: URL; token: string },
): Promise<boolean> {
  const attemptId = EVENTS_PATH.exec(input.url.pathname)?.[1];
  const parsed = parseCapabilityToken(input.token);
  if (attemptId === undefined || parsed === null || parsed.id !== attemptId) return false;
  const [row] = await sql<{ token_sha256: string }[]>`
    select token_sha256 from eval_attempts where id = ${attemptId}`;
  return checkCapabilityToken(
    deriveKey(input.secretKey, KeyLabel.attemptToken),
    CapabilityDomain.evalAttempt,
    input.token,
    row?.token_sha256 ?? NO_STORED_HASH,
  );
}
