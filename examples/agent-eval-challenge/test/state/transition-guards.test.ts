// What a transition refuses besides a forbidden (state, event) pair, and lazy expiry: a stale
// assignment or run, the clock, unknown ids, wrong records. Each refusal writes nothing.
import { HttpError } from "@platform/challenge-sdk";
import { testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  expireStale,
  publicSubmissionStatus,
  recordSubmissionReceived,
  SUBMISSION_STATES,
  transitionAssignment,
  transitionEvalRun,
  transitionSubmission,
} from "../../src/state/index.js";
import {
  agentEvalDatabase,
  inRolledBackTransaction,
  insertSubmission,
  newId,
  seedAssignment,
  seedRun,
  sha256Hex,
  statusEvents,
} from "../agent-eval-database.js";

const minutesFromNow = (minutes: number) => new Date(Date.now() + minutes * 60 * 1000);

async function refusal(promise: Promise<unknown>): Promise<HttpError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HttpError);
  return error as HttpError;
}

describe.each(await testBackends())("transition guards on %s", (backend) => {
  let db: Awaited<ReturnType<typeof agentEvalDatabase>>;
  beforeAll(async () => {
    db = await agentEvalDatabase(backend);
  });
  afterAll(() => db?.close());

  it("refuses a change to an assignment that is no longer its session's current one", async () => {
    await inRolledBackTransaction(db.sql, async (tx) => {
      const first = await seedAssignment(tx, "cancelled");
      // A retry: a second assignment becomes current; the first is history.
      const second = newId("ra");
      await tx`
        insert into review_assignments (id, session_id, submission_id, attempt, predecessor_id,
          core, core_sha256, token_sha256, nonce, expires_at)
        values (${second}, ${first.sessionId}, ${first.submissionId}, 2, ${first.assignmentId},
          '{}', ${sha256Hex(second)}, ${sha256Hex(`t:${second}`)}, ${newId("nonce")},
          now() + interval '30 minutes')`;
      await tx`update review_sessions set current_assignment_id = ${second}, attempts = 2
               where id = ${first.sessionId}`;
      await transitionSubmission(tx, {
        submissionId: first.submissionId,
        event: "review_issue",
        actor: "miner",
      });
      const error = await refusal(
        transitionAssignment(tx, {
          assignmentId: first.assignmentId,
          event: "cancel",
          actor: "miner",
        }),
      );
      expect([error.status, error.code]).toEqual([409, "stale_assignment"]);
      expect(error.extra).toEqual({ current_assignment_id: second });
      expect((await statusEvents(tx, first.submissionId)).map((e) => e.event)).toEqual([
        "review_issue",
      ]);
      // The current one still moves.
      const moved = await transitionAssignment(tx, {
        assignmentId: second,
        event: "cancel",
        actor: "miner",
      });
      expect(moved.to).toBe("cancelled");
    });
  });

  it("refuses a change to a run that is not its submission's current one", async () => {
    await inRolledBackTransaction(db.sql, async (tx) => {
      const seeded = await seedRun(tx, "prepared");
      await tx`update submissions set current_eval_run_id = null where id = ${seeded.submissionId}`;
      const error = await refusal(
        transitionEvalRun(tx, { runId: seeded.runId, event: "cancel", actor: "miner" }),
      );
      expect([error.status, error.code]).toEqual([409, "stale_run"]);
      const [run] = await tx`select state from eval_runs where id = ${seeded.runId}`;
      expect(run!["state"]).toBe("prepared");
    });
  });

  it("answers 404 with a stable code for unknown ids", async () => {
    await inRolledBackTransaction(db.sql, async (tx) => {
      const cases = [
        [
          transitionSubmission(tx, {
            submissionId: "999999",
            event: "review_issue",
            actor: "miner",
          }),
          "submission_not_found",
        ],
        [
          transitionAssignment(tx, { assignmentId: "ra_none", event: "cancel", actor: "miner" }),
          "assignment_not_found",
        ],
        [
          transitionEvalRun(tx, { runId: "run_none", event: "cancel", actor: "miner" }),
          "run_not_found",
        ],
      ] as const;
      for (const [attempt, code] of cases) {
        const error = await refusal(attempt);
        expect([error.status, error.code]).toEqual([404, code]);
      }
    });
  });

  it("lets a past-TTL assignment only expire, and refuses expiry before the TTL", async () => {
    await inRolledBackTransaction(db.sql, async (tx) => {
      const seeded = await seedAssignment(tx, "queued");
      const early = await refusal(
        transitionAssignment(tx, {
          assignmentId: seeded.assignmentId,
          event: "expire",
          actor: "system",
        }),
      );
      expect([early.status, early.code]).toEqual([409, "not_expired"]);
      const late = await refusal(
        transitionAssignment(tx, {
          assignmentId: seeded.assignmentId,
          event: "deploy",
          records: { deployed: { vm: "x" } },
          actor: "miner",
          now: minutesFromNow(31),
        }),
      );
      expect([late.status, late.code]).toEqual([410, "assignment_expired"]);
      const [row] =
        await tx`select state, deployed from review_assignments where id = ${seeded.assignmentId}`;
      expect(row).toEqual({ state: "queued", deployed: null });
      expect(await statusEvents(tx, seeded.submissionId)).toEqual([]);
    });
  });

  it("never expires a run holding a result, and still lets it be accepted after its TTL", async () => {
    await inRolledBackTransaction(db.sql, async (tx) => {
      const seeded = await seedRun(tx, "verifying");
      const later = minutesFromNow(7 * 60);
      expect(await expireStale(tx, later)).toEqual({ assignments: [], runs: [] });
      const accepted = await transitionEvalRun(tx, {
        runId: seeded.runId,
        event: "accept",
        records: { score: 1 },
        actor: "system",
        now: later,
      });
      expect(accepted.to).toBe("accepted");
      expect(accepted.submission?.to).toBe("completed");
    });
  });

  it("refuses records that do not belong to the event (a caller bug), before any write", async () => {
    await inRolledBackTransaction(db.sql, async (tx) => {
      const seeded = await seedAssignment(tx, "queued");
      await expect(
        transitionAssignment(tx, {
          assignmentId: seeded.assignmentId,
          event: "deploy",
          actor: "miner",
        }),
      ).rejects.toThrow(TypeError);
      await expect(
        transitionAssignment(tx, {
          assignmentId: seeded.assignmentId,
          event: "cancel",
          records: { failure: { sneaky: true } },
          actor: "miner",
        }),
      ).rejects.toThrow(TypeError);
      expect(await statusEvents(tx, seeded.submissionId)).toEqual([]);
    });
  });

  it("expires stale assignments and runs lazily, revoking nonces and moving the submissions", async () => {
    await inRolledBackTransaction(db.sql, async (tx) => {
      const stale = await seedAssignment(tx, "model_call_started");
      const verifying = await seedAssignment(tx, "verifying");
      const done = await seedAssignment(tx, "allowed");
      const run = await seedRun(tx, "running");
      // Before the TTL: nothing to do.
      expect(await expireStale(tx, minutesFromNow(29))).toEqual({ assignments: [], runs: [] });
      const expired = await expireStale(tx, minutesFromNow(31));
      expect(expired.assignments.sort()).toEqual(
        [stale.assignmentId, verifying.assignmentId].sort(),
      );
      expect(expired.runs).toEqual([]);
      const rows = await tx`
        select id, state, nonce_state from review_assignments
        where id in ${tx([stale.assignmentId, verifying.assignmentId, done.assignmentId, run.assignmentId])}`;
      const byId = Object.fromEntries(rows.map((r) => [r["id"], [r["state"], r["nonce_state"]]]));
      expect(byId).toEqual({
        [stale.assignmentId]: ["expired", "revoked"],
        [verifying.assignmentId]: ["expired", "revoked"],
        [done.assignmentId]: ["allowed", "consumed"],
        [run.assignmentId]: ["allowed", "consumed"],
      });
      const [submission] = await tx`select state from submissions where id = ${stale.submissionId}`;
      expect(submission!["state"]).toBe("review_expired");
      expect(
        (await statusEvents(tx, stale.submissionId)).map((e) => [
          e.seq,
          e.event,
          e.actor,
          e.reason_code,
        ]),
      ).toEqual([
        [1, "expire", "system", "ttl_elapsed"],
        [2, "review_expire", "system", "ttl_elapsed"],
      ]);
      const runExpiry = await expireStale(tx, minutesFromNow(6 * 60 + 1));
      expect(runExpiry).toEqual({ assignments: [], runs: [run.runId] });
      const [runRow] = await tx`select state from eval_runs where id = ${run.runId}`;
      expect(runRow!["state"]).toBe("expired");
      const [runSubmission] =
        await tx`select state from submissions where id = ${run.submissionId}`;
      expect(runSubmission!["state"]).toBe("eval_failed");
      // Idempotent: a second pass finds nothing.
      expect(await expireStale(tx, minutesFromNow(6 * 60 + 2))).toEqual({
        assignments: [],
        runs: [],
      });
    });
  });

  it("walks a submission through review and eval, numbering its history 1, 2, 3, ...", async () => {
    await inRolledBackTransaction(db.sql, async (tx) => {
      const seeded = await seedAssignment(tx, "queued", { submissionState: "received" });
      const id = seeded.submissionId;
      await recordSubmissionReceived(tx, id, "miner");
      await transitionSubmission(tx, { submissionId: id, event: "review_issue", actor: "miner" });
      const a = seeded.assignmentId;
      const steps = [
        { event: "deploy", records: { deployed: { vm_id: "vm-1" } }, actor: "miner" },
        { event: "start_model_call", records: { modelCall: { model: "m" } }, actor: "review_vm" },
        {
          event: "receive_report",
          records: { reportEnvelope: { schema_version: 1 }, receiptSha256: sha256Hex("r") },
          actor: "review_vm",
        },
        { event: "allow", records: { verification: { outcome: "verified" } }, actor: "system" },
      ] as const;
      for (const step of steps) {
        await transitionAssignment(tx, { assignmentId: a, ...step, records: { ...step.records } });
      }
      const events = await statusEvents(tx, id);
      expect(events.map((e) => `${e.seq}:${e.machine}:${e.to_state}`)).toEqual([
        "1:submission:received",
        "2:submission:review_queued",
        "3:assignment:deployed",
        "4:submission:review_running",
        "5:assignment:model_call_started",
        "6:assignment:verifying",
        "7:submission:review_verifying",
        "8:assignment:allowed",
        "9:submission:review_allowed",
      ]);
      const [row] =
        await tx`select state, nonce_state, deployed from review_assignments where id = ${a}`;
      expect(row).toEqual({
        state: "allowed",
        nonce_state: "consumed",
        deployed: { vm_id: "vm-1" },
      });
    });
  });

  it("maps every internal submission state to one public label", () => {
    const labels = Object.fromEntries(SUBMISSION_STATES.map((s) => [s, publicSubmissionStatus(s)]));
    expect(labels["review_escalated"]).toBe("suspicious");
    expect(labels["completed"]).toBe("valid");
    expect(Object.values(labels).every((label) => typeof label === "string")).toBe(true);
  });

  it("stores the first event of a fresh submission as seq 1", async () => {
    await inRolledBackTransaction(db.sql, async (tx) => {
      const id = await insertSubmission(tx);
      expect(await recordSubmissionReceived(tx, id, "miner")).toBe(1);
      expect((await statusEvents(tx, id))[0]).toMatchObject({
        from_state: null,
        to_state: "received",
      });
    });
  });
});
