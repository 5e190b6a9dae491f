// Every (state, event) pair of each machine, on both databases: an allowed pair does what its row
// says and appends exactly one status event with the next seq (two when the submission moves
// too); a forbidden pair is a 409 invalid_transition and writes nothing.
import { HttpError, type TransactionSql } from "@platform/challenge-sdk";
import { testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ASSIGNMENT_EVENTS,
  ASSIGNMENT_STATES,
  ASSIGNMENT_TRANSITIONS,
  type AssignmentEvent,
  type AssignmentRecords,
  assignmentNonceState,
  EVAL_RUN_EVENTS,
  EVAL_RUN_STATES,
  EVAL_RUN_TRANSITIONS,
  type EvalRunEvent,
  type EvalRunRecords,
  nextState,
  SUBMISSION_EVENT_OF_ASSIGNMENT_EVENT,
  SUBMISSION_EVENT_OF_EVAL_RUN_EVENT,
  SUBMISSION_EVENTS,
  SUBMISSION_STATES,
  SUBMISSION_TRANSITIONS,
  transitionAssignment,
  transitionEvalRun,
  transitionSubmission,
} from "../../src/state/index.js";
import {
  agentEvalDatabase,
  inRolledBackTransaction,
  insertSubmission,
  SUBMISSION_STATE_OF_ASSIGNMENT,
  SUBMISSION_STATE_OF_RUN,
  seedAssignment,
  seedRun,
  sha256Hex,
  statusEvents,
} from "../agent-eval-database.js";

const pairs = <S extends string, E extends string>(states: readonly S[], events: readonly E[]) =>
  states.flatMap((state) => events.map((event) => [state, event] as const));

const LATER = () => new Date(Date.now() + 31 * 60 * 1000);
const MUCH_LATER = () => new Date(Date.now() + 7 * 60 * 60 * 1000);

function assignmentRecords(event: AssignmentEvent): AssignmentRecords {
  const payload = { event };
  switch (event) {
    case "deploy":
      return { deployed: payload };
    case "start_model_call":
      return { modelCall: payload };
    case "receive_report":
      return { reportEnvelope: payload, receiptSha256: sha256Hex(event) };
    case "allow":
    case "reject":
    case "escalate":
    case "fail_verification":
      return { verification: payload };
    case "fail":
      return { failure: payload };
    default:
      return {};
  }
}

function runRecords(event: EvalRunEvent): EvalRunRecords {
  if (event === "receive_result") return { resultSha256: sha256Hex("result") };
  if (event === "accept") return { score: 0.75 };
  if (event === "fail") return { failureCode: "tunnel_failed", failure: { detail: "x" } };
  return {};
}

async function expectConflict(promise: Promise<unknown>, status: number, code: string) {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HttpError);
  expect((error as HttpError).status).toBe(status);
  expect((error as HttpError).code).toBe(code);
}

async function snapshot(tx: TransactionSql, table: string, id: string) {
  const [row] = await tx`select * from ${tx(table)} where id = ${id}`;
  return row;
}

describe.each(await testBackends())("state machine tables on %s", (backend) => {
  let db: Awaited<ReturnType<typeof agentEvalDatabase>>;
  beforeAll(async () => {
    db = await agentEvalDatabase(backend);
  });
  afterAll(() => db?.close());

  it("has exactly one row per allowed (from, event) in each table", () => {
    for (const table of [SUBMISSION_TRANSITIONS, ASSIGNMENT_TRANSITIONS, EVAL_RUN_TRANSITIONS]) {
      const keys = table.map((row) => `${row.from}/${row.event}`);
      expect(new Set(keys).size).toBe(keys.length);
    }
  });

  it("pins the rules from the facts, so a wrong table cannot pass the table-driven cases", () => {
    const sources = <S extends string, E extends string>(
      table: readonly { from: S; event: E; to: S }[],
      event: E,
    ) =>
      table
        .filter((row) => row.event === event)
        .map((row) => `${row.from}->${row.to}`)
        .sort();
    // Assignment: expiry from every active state; cancel and failure only before a report; a
    // failed verification is a rejection; nothing leaves a terminal state.
    expect(sources(ASSIGNMENT_TRANSITIONS, "expire")).toEqual(
      ["deployed", "model_call_started", "queued", "verifying"].map((s) => `${s}->expired`),
    );
    expect(sources(ASSIGNMENT_TRANSITIONS, "cancel")).toEqual(
      ["deployed", "model_call_started", "queued"].map((s) => `${s}->cancelled`),
    );
    expect(sources(ASSIGNMENT_TRANSITIONS, "fail")).toEqual(
      ["deployed", "model_call_started", "queued"].map((s) => `${s}->error`),
    );
    expect(sources(ASSIGNMENT_TRANSITIONS, "fail_verification")).toEqual(["verifying->rejected"]);
    const terminal = ["allowed", "rejected", "escalated", "error", "cancelled", "expired"];
    expect(ASSIGNMENT_TRANSITIONS.filter((row) => terminal.includes(row.from))).toEqual([]);
    // Run: cancel, failure and expiry only before any result; nothing leaves a terminal state.
    for (const event of ["cancel", "fail", "expire"] as const) {
      expect(sources(EVAL_RUN_TRANSITIONS, event).map((r) => r.split("->")[0])).toEqual([
        "prepared",
        "running",
      ]);
    }
    const runTerminal = ["accepted", "rejected", "cancelled", "expired", "error"];
    expect(EVAL_RUN_TRANSITIONS.filter((row) => runTerminal.includes(row.from))).toEqual([]);
    // Submission: an allowed review is never reviewed again; eval only after an allow (or a
    // retryable eval failure); completed and eval_rejected are final.
    expect(sources(SUBMISSION_TRANSITIONS, "review_issue").map((r) => r.split("->")[0])).toEqual([
      "received",
      "review_cancelled",
      "review_error",
      "review_escalated",
      "review_expired",
      "review_rejected",
    ]);
    expect(sources(SUBMISSION_TRANSITIONS, "eval_issue")).toEqual([
      "eval_failed->eval_running",
      "review_allowed->eval_running",
    ]);
    // completed and eval_rejected leave only by the owner's revalidate (rule 23).
    const final = ["completed", "eval_rejected"];
    expect(
      SUBMISSION_TRANSITIONS.filter((row) => final.includes(row.from)).map((row) => row.event),
    ).toEqual(["eval_revalidate", "eval_revalidate"]);
  });

  it("checks every submission (state, event) pair", async () => {
    for (const [from, event] of pairs(SUBMISSION_STATES, SUBMISSION_EVENTS)) {
      const to = nextState(SUBMISSION_TRANSITIONS, from, event);
      await inRolledBackTransaction(db.sql, async (tx) => {
        const id = await insertSubmission(tx, { state: from });
        const before = await snapshot(tx, "submissions", id);
        const attempt = transitionSubmission(tx, { submissionId: id, event, actor: "miner" });
        if (!to) {
          await expectConflict(attempt, 409, "invalid_transition");
          expect(await snapshot(tx, "submissions", id)).toEqual(before);
          expect(await statusEvents(tx, id)).toEqual([]);
          return;
        }
        expect(await attempt, `${from} --${event}-->`).toEqual({ from, to, seq: 1 });
        const [after] = await tx`select state, last_event_seq from submissions where id = ${id}`;
        expect(after).toEqual({ state: to, last_event_seq: 1 });
        expect(await statusEvents(tx, id)).toEqual([
          {
            seq: 1,
            machine: "submission",
            subject_id: id,
            event,
            from_state: from,
            to_state: to,
            actor: "miner",
            reason_code: null,
          },
        ]);
      });
    }
  });

  it("checks every assignment (state, event) pair, moving the submission with it", async () => {
    for (const [from, event] of pairs(ASSIGNMENT_STATES, ASSIGNMENT_EVENTS)) {
      const to = nextState(ASSIGNMENT_TRANSITIONS, from, event);
      await inRolledBackTransaction(db.sql, async (tx) => {
        const seeded = await seedAssignment(tx, from);
        const before = await snapshot(tx, "review_assignments", seeded.assignmentId);
        const submissionBefore = await snapshot(tx, "submissions", seeded.submissionId);
        const attempt = transitionAssignment(tx, {
          assignmentId: seeded.assignmentId,
          event,
          records: assignmentRecords(event),
          actor: "review_vm",
          reasonCode: "case",
          ...(event === "expire" ? { now: LATER() } : {}),
        });
        if (!to) {
          await expectConflict(attempt, 409, "invalid_transition");
          expect(await snapshot(tx, "review_assignments", seeded.assignmentId)).toEqual(before);
          expect(await snapshot(tx, "submissions", seeded.submissionId)).toEqual(submissionBefore);
          expect(await statusEvents(tx, seeded.submissionId)).toEqual([]);
          return;
        }
        const result = await attempt;
        const submissionEvent = SUBMISSION_EVENT_OF_ASSIGNMENT_EVENT[event];
        const submissionFrom = SUBMISSION_STATE_OF_ASSIGNMENT[from]!;
        const submissionTo = SUBMISSION_STATE_OF_ASSIGNMENT[to]!;
        expect(result).toEqual({
          from,
          to,
          seq: 1,
          submission: submissionEvent ? { from: submissionFrom, to: submissionTo, seq: 2 } : null,
        });
        const after = await snapshot(tx, "review_assignments", seeded.assignmentId);
        expect(after!["state"]).toBe(to);
        expect(after!["nonce_state"]).toBe(assignmentNonceState(to));
        const [submission] =
          await tx`select state from submissions where id = ${seeded.submissionId}`;
        expect(submission!["state"]).toBe(submissionEvent ? submissionTo : submissionFrom);
        const events = await statusEvents(tx, seeded.submissionId);
        expect(events.map((e) => [e.seq, e.machine, e.event, e.from_state, e.to_state])).toEqual([
          [1, "assignment", event, from, to],
          ...(submissionEvent
            ? [[2, "submission", submissionEvent, submissionFrom, submissionTo]]
            : []),
        ]);
        expect(events.every((e) => e.reason_code === "case" && e.actor === "review_vm")).toBe(true);
        // The event's record landed in its write-once column.
        const column = {
          deploy: "deployed",
          start_model_call: "model_call",
          receive_report: "report_envelope",
          allow: "verification",
          reject: "verification",
          escalate: "verification",
          fail_verification: "verification",
          fail: "failure",
        }[event as string];
        if (column) expect(after![column]).toEqual({ event });
      });
    }
  });

  it("checks every eval run (state, event) pair, moving the submission with it", async () => {
    for (const [from, event] of pairs(EVAL_RUN_STATES, EVAL_RUN_EVENTS)) {
      const to = nextState(EVAL_RUN_TRANSITIONS, from, event);
      await inRolledBackTransaction(db.sql, async (tx) => {
        const seeded = await seedRun(tx, from);
        const before = await snapshot(tx, "eval_runs", seeded.runId);
        const submissionBefore = await snapshot(tx, "submissions", seeded.submissionId);
        const attempt = transitionEvalRun(tx, {
          runId: seeded.runId,
          event,
          records: runRecords(event),
          actor: "eval_vm",
          ...(event === "expire" ? { now: MUCH_LATER() } : {}),
        });
        if (!to) {
          await expectConflict(attempt, 409, "invalid_transition");
          expect(await snapshot(tx, "eval_runs", seeded.runId)).toEqual(before);
          expect(await snapshot(tx, "submissions", seeded.submissionId)).toEqual(submissionBefore);
          expect(await statusEvents(tx, seeded.submissionId)).toEqual([]);
          return;
        }
        const result = await attempt;
        const submissionEvent = SUBMISSION_EVENT_OF_EVAL_RUN_EVENT[event];
        const submissionFrom = SUBMISSION_STATE_OF_RUN[from]!;
        const submissionTo = SUBMISSION_STATE_OF_RUN[to]!;
        expect(result).toEqual({
          from,
          to,
          seq: 1,
          submission: submissionEvent ? { from: submissionFrom, to: submissionTo, seq: 2 } : null,
        });
        const after = await snapshot(tx, "eval_runs", seeded.runId);
        expect(after!["state"]).toBe(to);
        if (event === "accept") expect(after!["score"]).toBe(0.75);
        if (event === "fail") expect(after!["failure_code"]).toBe("tunnel_failed");
        if (event === "receive_result") expect(after!["result_sha256"]).toBe(sha256Hex("result"));
        const events = await statusEvents(tx, seeded.submissionId);
        expect(events.map((e) => [e.seq, e.machine, e.event, e.from_state, e.to_state])).toEqual([
          [1, "eval_run", event, from, to],
          ...(submissionEvent
            ? [[2, "submission", submissionEvent, submissionFrom, submissionTo]]
            : []),
        ]);
      });
    }
  });
});
