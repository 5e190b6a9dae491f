/**
 * The service's three capability tokens (the SDK's `issueCapabilityToken`): `<id>.<HMAC>` of a
 * scope and a record id, under the scope's own purpose key, only its sha256 stored beside the
 * record. A token of one scope never opens another's routes: a run token is not a review token,
 * and an attempt token opens neither.
 *
 * They carry no expiry: each opens a record with a lifetime of its own (an assignment or run
 * expires, is cancelled, or waits past its deadline for a verdict), and the record's state is
 * the finer verdict: 410 capability_revoked once revoked, where an expired token could only say
 * 401.
 */
import {
  type IssuedCapabilityToken,
  issueCapabilityToken,
  verifyCapabilityToken,
} from "@platform/challenge-sdk/tokens";
import { deriveKey, KeyLabel } from "./key-derivation.js";

const SCOPES = {
  /** REVIEW_SESSION_TOKEN: one review assignment. */
  reviewAssignment: { scope: "agent-eval/review-assignment/v1", label: KeyLabel.reviewToken },
  /** EVAL_RUN_TOKEN: one external eval run. */
  evalRun: { scope: "agent-eval/eval-run/v1", label: KeyLabel.runToken },
  /** An attempt's events bearer: one task trial's log stream. */
  evalAttempt: { scope: "agent-eval/eval-attempt/v1", label: KeyLabel.attemptToken },
} as const;

/** The kinds of capability token the service issues. */
export type CapabilityKind = keyof typeof SCOPES;

/**
 * The key and scope of `kind`'s tokens, as `issueCapabilityToken` and `verifyCapabilityToken`
 * take them.
 */
export function capabilityScope(
  secretKey: Buffer,
  kind: CapabilityKind,
): { key: Buffer; scope: string } {
  const { scope, label } = SCOPES[kind];
  return { key: deriveKey(secretKey, label), scope };
}

/**
 * The token of record `id` of `kind`: the same every time (an HMAC of the id), so re-deriving it
 * is re-delivering it, and only its sha256 is stored.
 */
export function capabilityToken(
  secretKey: Buffer,
  kind: CapabilityKind,
  id: string,
): IssuedCapabilityToken {
  return issueCapabilityToken({ ...capabilityScope(secretKey, kind), id });
}

/**
 * `row` without its stored hash when `token` is the live token of record `id` of `kind`, else
 * null (a bearer's 401). Verified whether or not the row exists: a missing record costs the same
 * comparisons.
 */
export function tokenHolder<Row extends { token_sha256: string }>(
  token: string,
  secretKey: Buffer,
  kind: CapabilityKind,
  id: string,
  row: Row | undefined,
): Omit<Row, "token_sha256"> | null {
  const scope = capabilityScope(secretKey, kind);
  const verdict = verifyCapabilityToken(token, { ...scope, id, storedHash: row?.token_sha256 });
  if (!row || !verdict.ok) return null;
  const { token_sha256: _stored, ...holder } = row;
  return holder;
}
