// A fresh database with this challenge's migrations applied (after the SDK's), for tests of the
// modules that query it: the SDK's testDatabase, on either backend. The seeding helpers write
// rows straight into a given state, with the records that state requires, so a test can start
// any transition from any state.
import { createHash, randomBytes } from "node:crypto";
import type { Sql, TransactionSql } from "@platform/challenge-sdk";
import { testDatabase } from "@platform/challenge-sdk/testing";

/** This challenge's migrations. */
export const MIGRATIONS = new URL("../migrations/", import.meta.url);

/** A migrated database on `backend`; `close` drops it. */
export function agentEvalDatabase(
  backend: "postgres" | "pglite",
): Promise<{ sql: Sql; close: () => Promise<void> }> {
  return testDatabase(MIGRATIONS, { backend });
}

type Db = Sql | TransactionSql;

export const sha256Hex = (data: string | Buffer): string =>
  createHash("sha256").update(data).digest("hex");

/** A fresh id in the [A-Za-z0-9_-] alphabet the schema accepts. */
export const newId = (prefix: string): string =>
  `${prefix}_${randomBytes(9).toString("base64url")}`;

/** Insert a submission (unique artifact bytes unless given) in `state`. */
export async function insertSubmission(
  db: Db,
  row: { hotkey?: string; state?: string; artifact?: Buffer; via?: "signed" | "bridge" } = {},
): Promise<string> {
  const artifact = row.artifact ?? Buffer.concat([Buffer.from("PK\x03\x04"), randomBytes(16)]);
  const [inserted] = await db<{ id: string }[]>`
    insert into submissions (hotkey, name, filename, artifact, artifact_sha256, size, via, state)
    values (${row.hotkey ?? "5Hotkey"}, 'agent', 'agent.zip', ${artifact}, ${sha256Hex(artifact)},
            ${artifact.length}, ${row.via ?? "signed"}, ${row.state ?? "received"})
    returning id`;
  return inserted!.id;
}

/** The submission state that mirrors each assignment state. */
export const SUBMISSION_STATE_OF_ASSIGNMENT: Record<string, string> = {
  queued: "review_queued",
  deployed: "review_running",
  model_call_started: "review_running",
  verifying: "review_verifying",
  allowed: "review_allowed",
  rejected: "review_rejected",
  escalated: "review_escalated",
  error: "review_error",
  cancelled: "review_cancelled",
  expired: "review_expired",
};

const PAST_DEPLOY = [
  "deployed",
  "model_call_started",
  "verifying",
  "allowed",
  "rejected",
  "escalated",
];
const PAST_MODEL_CALL = ["model_call_started", "verifying", "allowed", "rejected", "escalated"];
const PAST_REPORT = ["verifying", "allowed", "rejected", "escalated"];
const VERIFIED = ["allowed", "rejected", "escalated"];

function nonceStateOf(state: string): string {
  if (["queued", "deployed", "model_call_started", "verifying"].includes(state)) return "active";
  return VERIFIED.includes(state) ? "consumed" : "revoked";
}

export interface SeededAssignment {
  submissionId: string;
  sessionId: string;
  assignmentId: string;
}

/**
 * A submission (in the mirrored state, unless given), its review session and one assignment in
 * `state`, carrying every record that state implies. Expires 30 min after the transaction's now().
 */
export async function seedAssignment(
  db: Db,
  state: string,
  options: { submissionState?: string; submissionId?: string } = {},
): Promise<SeededAssignment> {
  const submissionId =
    options.submissionId ??
    (await insertSubmission(db, {
      state: options.submissionState ?? SUBMISSION_STATE_OF_ASSIGNMENT[state]!,
    }));
  const sessionId = newId("rs");
  const assignmentId = newId("ra");
  await db`
    insert into review_sessions (id, submission_id, current_assignment_id, attempts)
    values (${sessionId}, ${submissionId}, ${assignmentId}, 1)`;
  const has = (states: string[]) => states.includes(state);
  const record = (present: boolean) => (present ? db.json({ seeded: true }) : null);
  await db`
    insert into review_assignments (
      id, session_id, submission_id, attempt, core, core_sha256, state, token_sha256, nonce,
      nonce_state, issued_at, expires_at,
      deployed, deployed_at, model_call, model_call_at, failure, failed_at,
      report_envelope, receipt_sha256, reported_at, verification, verified_at)
    values (
      ${assignmentId}, ${sessionId}, ${submissionId}, 1, '{"v":1}', ${sha256Hex(assignmentId)},
      ${state}, ${sha256Hex(`token:${assignmentId}`)}, ${newId("nonce")}, ${nonceStateOf(state)},
      now(), now() + interval '30 minutes',
      ${record(has(PAST_DEPLOY))}, ${has(PAST_DEPLOY) ? new Date() : null},
      ${record(has(PAST_MODEL_CALL))}, ${has(PAST_MODEL_CALL) ? new Date() : null},
      ${record(state === "error")}, ${state === "error" ? new Date() : null},
      ${record(has(PAST_REPORT))}, ${has(PAST_REPORT) ? sha256Hex("receipt") : null},
      ${has(PAST_REPORT) ? new Date() : null},
      ${record(has(VERIFIED))}, ${has(VERIFIED) ? new Date() : null})`;
  return { submissionId, sessionId, assignmentId };
}

/** The submission state that mirrors each run state. */
export const SUBMISSION_STATE_OF_RUN: Record<string, string> = {
  prepared: "eval_running",
  running: "eval_running",
  verifying: "eval_running",
  accepted: "completed",
  rejected: "eval_rejected",
  cancelled: "eval_failed",
  expired: "eval_failed",
  error: "eval_failed",
};

export interface SeededRun extends SeededAssignment {
  runId: string;
}

/**
 * An allowed review and one eval run in `state` (the submission's current run), carrying every
 * record that state implies. Expires 6 h after the transaction's now().
 */
export async function seedRun(db: Db, state: string): Promise<SeededRun> {
  const seeded = await seedAssignment(db, "allowed", {
    submissionState: SUBMISSION_STATE_OF_RUN[state]!,
  });
  const runId = newId("run");
  const hasResult = ["verifying", "accepted", "rejected"].includes(state);
  await db`
    insert into eval_runs (
      id, submission_id, review_assignment_id, run_number, review_run_number, state, plan,
      plan_sha256, token_sha256, nonce, issued_at, expires_at, started_at,
      result_sha256, result_received_at, score, accepted_at, failure_code, failure, failed_at)
    values (
      ${runId}, ${seeded.submissionId}, ${seeded.assignmentId}, 1, 1, ${state}, '{"v":1}',
      ${sha256Hex(runId)}, ${sha256Hex(`token:${runId}`)}, ${newId("nonce")},
      now(), now() + interval '6 hours', ${state === "prepared" ? null : new Date()},
      ${hasResult ? sha256Hex("result") : null}, ${hasResult ? new Date() : null},
      ${state === "accepted" ? 0.5 : null}, ${state === "accepted" ? new Date() : null},
      ${state === "error" ? "no_result" : null}, ${state === "error" ? db.json({ seeded: true }) : null},
      ${state === "error" ? new Date() : null})`;
  await db`update submissions set current_eval_run_id = ${runId} where id = ${seeded.submissionId}`;
  return { ...seeded, runId };
}

/** The status events of a submission, in seq order. */
export async function statusEvents(db: Db, submissionId: string) {
  return db<
    {
      seq: number;
      machine: string;
      subject_id: string;
      event: string;
      from_state: string | null;
      to_state: string;
      actor: string;
      reason_code: string | null;
    }[]
  >`
    select seq, machine, subject_id, event, from_state, to_state, actor, reason_code
    from submission_status_events where submission_id = ${submissionId} order by seq`;
}

/** Thrown to roll a test's transaction back after its assertions ran inside it. */
export class Rollback extends Error {}

/** Runs `body` in a transaction that is always rolled back: each case leaves nothing behind. */
export async function inRolledBackTransaction(
  sql: Sql,
  body: (tx: TransactionSql) => Promise<void>,
): Promise<void> {
  await sql
    .begin(async (tx) => {
      await body(tx);
      throw new Rollback();
    })
    .catch((error: unknown) => {
      if (!(error instanceof Rollback)) throw error;
    });
}
