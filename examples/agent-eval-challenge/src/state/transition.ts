import { databaseNow, HttpError, type TransactionSql } from "@platform/challenge-sdk";
import {
  ASSIGNMENT_TRANSITIONS,
  type AssignmentEvent,
  type AssignmentState,
  assignmentNonceState,
  SUBMISSION_EVENT_OF_ASSIGNMENT_EVENT,
} from "./assignment-states.js";
import {
  EVAL_RUN_TRANSITIONS,
  type EvalFailureCode,
  type EvalRunEvent,
  type EvalRunState,
  SUBMISSION_EVENT_OF_EVAL_RUN_EVENT,
} from "./eval-run-states.js";
import { type Actor, appendStatusEvent } from "./status-events.js";
import {
  SUBMISSION_TRANSITIONS,
  type SubmissionEvent,
  type SubmissionState,
} from "./submission-states.js";
import {
  invalidTransition,
  notFound,
  staleAssignment,
  staleRun,
  TRANSITION_ERROR_CODES,
  type TransitionErrorCode,
  transitionConflict,
} from "./transition-errors.js";
import { nextState, type TransitionTable } from "./transition-table.js";

/** Who, why and when; shared by the three machines. */
export interface TransitionContext {
  actor: Actor;
  reasonCode?: string | null;
  reason?: string | null;
  /** The time of the change; the database's now() when omitted. */
  now?: Date;
}

/** What one state change did: the states, and the seq of the status event it appended. */
export interface TransitionResult<State extends string> {
  from: State;
  to: State;
  seq: number;
}

/** An assignment or run change, and the submission change it implied (null when none). */
export interface MirroredTransitionResult<State extends string> extends TransitionResult<State> {
  submission: TransitionResult<SubmissionState> | null;
}

type JsonObject = Record<string, unknown>;
/** Column values for postgres.js's update helper (jsonb columns as `tx.json(...)` parameters). */
type ColumnValues = Record<string, unknown>;

/**
 * Moves a submission by `event`, inside `tx`: compare-and-swap on its state, then one status
 * event with its next seq. A forbidden event or a lost race is a 409, never a no-op.
 */
export async function transitionSubmission(
  tx: TransactionSql,
  input: { submissionId: string; event: SubmissionEvent } & TransitionContext,
): Promise<TransitionResult<SubmissionState>> {
  const { submissionId, event } = input;
  const [row] = await tx<{ state: SubmissionState }[]>`
    select state from submissions where id = ${submissionId}`;
  if (!row) throw notFound(TRANSITION_ERROR_CODES.submissionNotFound, `Submission ${submissionId}`);
  const to = nextState(SUBMISSION_TRANSITIONS, row.state, event);
  if (!to) throw invalidTransition("submission", submissionId, row.state, event);
  const at = input.now ?? (await databaseNow(tx));
  const updated = await tx`
    update submissions set state = ${to}
    where id = ${submissionId} and state = ${row.state}
    returning id`;
  if (updated.length === 0) throw transitionConflict("submission", submissionId, row.state);
  const seq = await appendStatusEvent(tx, {
    ...statusFields(input, at),
    submissionId,
    machine: "submission",
    subjectId: submissionId,
    event,
    fromState: row.state,
    toState: to,
  });
  return { from: row.state, to, seq };
}

/** The write-once records an assignment event carries (exactly those its event requires). */
export interface AssignmentRecords {
  deployed?: JsonObject;
  modelCall?: JsonObject;
  failure?: JsonObject;
  reportEnvelope?: JsonObject;
  receiptSha256?: string;
  verification?: JsonObject;
}

const ASSIGNMENT_EVENT_RECORDS: Readonly<
  Record<AssignmentEvent, readonly (keyof AssignmentRecords)[]>
> = {
  deploy: ["deployed"],
  start_model_call: ["modelCall"],
  receive_report: ["reportEnvelope", "receiptSha256"],
  allow: ["verification"],
  reject: ["verification"],
  escalate: ["verification"],
  fail_verification: ["verification"],
  fail: ["failure"],
  cancel: [],
  expire: [],
};

function assignmentColumns(tx: TransactionSql, records: AssignmentRecords, at: Date): ColumnValues {
  const json = jsonParameter(tx);
  const columns: ColumnValues = {};
  if (records.deployed)
    Object.assign(columns, { deployed: json(records.deployed), deployed_at: at });
  if (records.modelCall) {
    Object.assign(columns, { model_call: json(records.modelCall), model_call_at: at });
  }
  if (records.failure) Object.assign(columns, { failure: json(records.failure), failed_at: at });
  if (records.reportEnvelope) {
    Object.assign(columns, {
      report_envelope: json(records.reportEnvelope),
      receipt_sha256: records.receiptSha256 ?? null,
      reported_at: at,
    });
  }
  if (records.verification) {
    Object.assign(columns, { verification: json(records.verification), verified_at: at });
  }
  return columns;
}

/**
 * Moves a review assignment by `event`, inside `tx`: the assignment must be its session's
 * current one (else 409 stale_assignment), the table must allow the event (else 409
 * invalid_transition), a past-TTL assignment only expires (else 410 assignment_expired); then a
 * compare-and-swap on (state, current assignment) writes the new state, the nonce state and the
 * event's write-once records, appends the status event, and moves the submission when the event
 * implies it (all or nothing: the caller's transaction rolls back on any throw).
 */
export async function transitionAssignment(
  tx: TransactionSql,
  input: {
    assignmentId: string;
    event: AssignmentEvent;
    records?: AssignmentRecords;
  } & TransitionContext,
): Promise<MirroredTransitionResult<AssignmentState>> {
  const { assignmentId } = input;
  const records = input.records ?? {};
  requireExactRecords("assignment", input.event, ASSIGNMENT_EVENT_RECORDS[input.event], records);
  return transitionChild(tx, input, {
    machine: "assignment",
    name: "assignment",
    id: assignmentId,
    what: `Assignment ${assignmentId}`,
    table: ASSIGNMENT_TRANSITIONS,
    submissionEvent: SUBMISSION_EVENT_OF_ASSIGNMENT_EVENT[input.event],
    notFoundCode: TRANSITION_ERROR_CODES.assignmentNotFound,
    expiredCode: TRANSITION_ERROR_CODES.assignmentExpired,
    stale: (current) => staleAssignment(assignmentId, current),
    read: (at) => tx<ChildRow<AssignmentState>[]>`
      select a.state, a.submission_id, s.current_assignment_id as current_id,
        a.expires_at <= ${at} as past_expiry
      from review_assignments a join review_sessions s on s.id = a.session_id
      where a.id = ${assignmentId}`,
    swap: (from, to, at) => tx`
      update review_assignments a set ${tx({
        ...assignmentColumns(tx, records, at),
        state: to,
        nonce_state: assignmentNonceState(to),
      } as never)}
      from review_sessions s
      where a.id = ${assignmentId} and a.state = ${from}
        and s.id = a.session_id and s.current_assignment_id = ${assignmentId}
      returning a.id`,
  });
}

/** The write-once records a run event carries (exactly those its event requires). */
export interface EvalRunRecords {
  resultSha256?: string;
  score?: number;
  failureCode?: EvalFailureCode;
  failure?: JsonObject;
}

const EVAL_RUN_EVENT_RECORDS: Readonly<Record<EvalRunEvent, readonly (keyof EvalRunRecords)[]>> = {
  start: [],
  receive_result: ["resultSha256"],
  accept: ["score"],
  reject: [],
  cancel: [],
  fail: ["failureCode", "failure"],
  expire: [],
};

function evalRunColumns(
  tx: TransactionSql,
  event: EvalRunEvent,
  records: EvalRunRecords,
  at: Date,
): ColumnValues {
  const json = jsonParameter(tx);
  switch (event) {
    case "start":
      return { started_at: at };
    case "receive_result":
      return { result_sha256: records.resultSha256 ?? null, result_received_at: at };
    case "accept":
      return { score: records.score ?? null, accepted_at: at };
    case "fail":
      return {
        failure_code: records.failureCode ?? null,
        failure: json(records.failure ?? {}),
        failed_at: at,
      };
    default:
      return {};
  }
}

/**
 * Moves an eval run by `event`, inside `tx`: the run must be its submission's current one (else
 * 409 stale_run), the table must allow the event (else 409 invalid_transition), a past-TTL run
 * before any result only expires (else 410 run_expired); then compare-and-swap, the event's
 * write-once records, the status event, and the submission's move when the event implies one.
 */
export async function transitionEvalRun(
  tx: TransactionSql,
  input: { runId: string; event: EvalRunEvent; records?: EvalRunRecords } & TransitionContext,
): Promise<MirroredTransitionResult<EvalRunState>> {
  const { runId, event } = input;
  const records = input.records ?? {};
  requireExactRecords("eval run", event, EVAL_RUN_EVENT_RECORDS[event], records);
  return transitionChild(tx, input, {
    machine: "eval_run",
    name: "eval run",
    id: runId,
    what: `Eval run ${runId}`,
    table: EVAL_RUN_TRANSITIONS,
    submissionEvent: SUBMISSION_EVENT_OF_EVAL_RUN_EVENT[event],
    notFoundCode: TRANSITION_ERROR_CODES.runNotFound,
    expiredCode: TRANSITION_ERROR_CODES.runExpired,
    stale: (current) => staleRun(runId, current),
    read: (at) => tx<ChildRow<EvalRunState>[]>`
      select r.state, r.submission_id, s.current_eval_run_id as current_id,
        r.expires_at <= ${at} as past_expiry
      from eval_runs r join submissions s on s.id = r.submission_id
      where r.id = ${runId}`,
    swap: (from, to, at) => tx`
      update eval_runs r set ${tx({ ...evalRunColumns(tx, event, records, at), state: to } as never)}
      from submissions s
      where r.id = ${runId} and r.state = ${from}
        and s.id = r.submission_id and s.current_eval_run_id = ${runId}
      returning r.id`,
  });
}

/** An assignment or run as its change reads it, with its parent's current child. */
interface ChildRow<State extends string> {
  state: State;
  submission_id: string;
  current_id: string | null;
  past_expiry: boolean;
}

/**
 * The change of an assignment or a run, inside `tx`: it must be its parent's current one (else
 * 409 stale_assignment / stale_run), the table must allow the event (else 409
 * invalid_transition), past its TTL it only expires (else 410); then the compare-and-swap
 * (`swap`: the new state and the event's write-once records), the status event, and the
 * submission's move when the event implies one.
 */
async function transitionChild<State extends string, Event extends string>(
  tx: TransactionSql,
  input: { event: Event } & TransitionContext,
  child: {
    machine: "assignment" | "eval_run";
    /** How refusals name the machine, and the child itself ("Eval run <id>"). */
    name: string;
    id: string;
    what: string;
    table: TransitionTable<State, Event>;
    submissionEvent: SubmissionEvent | null;
    notFoundCode: TransitionErrorCode;
    expiredCode: TransitionErrorCode;
    stale: (currentId: string | null) => HttpError;
    read: (at: Date) => PromiseLike<readonly ChildRow<State>[]>;
    swap: (from: State, to: State, at: Date) => PromiseLike<readonly unknown[]>;
  },
): Promise<MirroredTransitionResult<State>> {
  const { event } = input;
  const { what } = child;
  const at = input.now ?? (await databaseNow(tx));
  const [row] = await child.read(at);
  if (!row) throw notFound(child.notFoundCode, what);
  if (row.current_id !== child.id) throw child.stale(row.current_id);
  const to = nextState(child.table, row.state, event);
  if (!to) throw invalidTransition(child.name, child.id, row.state, event);
  checkExpiry(child.table, row.state, event, row.past_expiry, { code: child.expiredCode, what });
  const updated = await child.swap(row.state, to, at);
  if (updated.length === 0) throw transitionConflict(child.name, child.id, row.state);
  const seq = await appendStatusEvent(tx, {
    ...statusFields(input, at),
    submissionId: row.submission_id,
    machine: child.machine,
    subjectId: child.id,
    event,
    fromState: row.state,
    toState: to,
  });
  const submission = child.submissionEvent
    ? await transitionSubmission(tx, {
        ...input,
        now: at,
        submissionId: row.submission_id,
        event: child.submissionEvent,
      })
    : null;
  return { from: row.state, to, seq, submission };
}

/**
 * Past its TTL, a state that can expire accepts only `expire`; `expire` before the TTL is
 * refused. States that cannot expire (a run holding a result) ignore the clock.
 */
function checkExpiry<State extends string, Event extends string>(
  table: TransitionTable<State, Event>,
  from: State,
  event: Event,
  pastExpiry: boolean,
  refusal: { code: string; what: string },
): void {
  if (event === "expire") {
    if (!pastExpiry) {
      throw new HttpError(
        409,
        TRANSITION_ERROR_CODES.notExpired,
        `${refusal.what} has not reached its expiry time.`,
      );
    }
    return;
  }
  if (pastExpiry && nextState(table, from, "expire") !== undefined) {
    throw new HttpError(410, refusal.code, `${refusal.what} has expired.`);
  }
}

/**
 * A caller that passes the wrong records has a bug: say so loudly (a plain Error, a 500) rather
 * than write a half-record the constraints would refuse less clearly.
 */
function requireExactRecords(
  machine: string,
  event: string,
  required: readonly string[],
  records: object,
): void {
  const given = Object.entries(records)
    .filter(([, value]) => value !== undefined)
    .map(([key]) => key)
    .sort();
  const expected = [...required].sort();
  if (given.join(",") !== expected.join(",")) {
    throw new TypeError(
      `The ${machine} event "${event}" takes the records [${expected.join(", ")}], got [${given.join(", ")}].`,
    );
  }
}

function statusFields(context: TransitionContext, at: Date) {
  return {
    actor: context.actor,
    reasonCode: context.reasonCode ?? null,
    reason: context.reason ?? null,
    at,
  };
}

/** A jsonb parameter (a plain string would be stored as a JSON string, not an object). */
function jsonParameter(tx: TransactionSql) {
  // postgres.js types json() over its own JSONValue; a JsonObject is one, typed more loosely.
  return (value: JsonObject) => tx.json(value as never);
}
