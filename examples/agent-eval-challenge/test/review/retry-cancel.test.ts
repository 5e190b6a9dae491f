// review/retry and review/cancel on both backends: rule 4 (a fresh assignment only after an
// eligible terminal predecessor) from every eligible state and refused from every ineligible
// one, the 16-attempt limit, concurrent retries (one new assignment), and rule 5 (cancel revokes
// only the named current assignment and its nonce; a stale id is 409).
import { createMinerKey, type MinerKey, testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentEvalTest, startAgentEval } from "../agent-eval-kit.js";
import {
  driveAssignment,
  ok,
  type ReviewAnswer,
  refusal,
  reviewCalls,
  submitAgent,
} from "./review-test-kit.js";

describe.each(await testBackends())("review retry and cancel on %s", (backend) => {
  let t: AgentEvalTest;
  beforeAll(async () => {
    t = await startAgentEval(backend);
  });
  afterAll(() => t?.close());

  /** A miner, its submission and its first assignment (prepared). */
  async function prepared(): Promise<{ miner: MinerKey; id: number; first: ReviewAnswer }> {
    const miner = await createMinerKey();
    const id = await submitAgent(t, miner);
    const first = await ok(await reviewCalls(t, miner).prepare(id));
    return { miner, id, first };
  }

  const assignmentRow = async (assignmentId: string) => {
    const [row] = await t.sql<{ state: string; nonce_state: string }[]>`
      select state, nonce_state from review_assignments where id = ${assignmentId}`;
    return row;
  };

  it("rule 4: retry creates a fresh assignment only after an eligible terminal predecessor", async () => {
    const { miner, id, first } = await prepared();
    const { retry, cancel } = reviewCalls(t, miner);
    // The current assignment is active: no retry.
    expect(await refusal(await retry(id, { expected_assignment_id: first.assignment_id }))).toEqual(
      { status: 409, code: "assignment_not_terminal" },
    );
    await ok(await cancel(id, first.assignment_id));
    const second = await ok(await retry(id, { expected_assignment_id: first.assignment_id }));
    expect(second.assignment_id).not.toBe(first.assignment_id);
    expect(second.session_id).toBe(first.session_id);
    expect(second.assignment.attempt).toBe(2);
    expect(second.assignment.nonce).not.toBe(first.assignment.nonce);
    expect(second.secret_delivery?.token.startsWith(`${second.assignment_id}.`)).toBe(true);
    const [session] = await t.sql<{ current_assignment_id: string; attempts: number }[]>`
      select current_assignment_id, attempts from review_sessions where id = ${first.session_id}`;
    expect(session).toEqual({ current_assignment_id: second.assignment_id, attempts: 2 });
    const [link] = await t.sql<{ predecessor_id: string }[]>`
      select predecessor_id from review_assignments where id = ${second.assignment_id}`;
    expect(link!.predecessor_id).toBe(first.assignment_id);
    // The new assignment's token is delivered once, like prepare's.
    const again = await ok(await reviewCalls(t, miner).prepare(id));
    expect(again.assignment_id).toBe(second.assignment_id);
    expect(again.secret_delivery).toBeUndefined();
    // The predecessor is kept, cancelled, its nonce revoked; a retry naming it now is stale.
    expect(await assignmentRow(first.assignment_id)).toEqual({
      state: "cancelled",
      nonce_state: "revoked",
    });
    expect(await refusal(await retry(id, { expected_assignment_id: first.assignment_id }))).toEqual(
      { status: 409, code: "stale_assignment" },
    );
  });

  for (const state of ["cancelled", "error"] as const) {
    it(`retries freely from ${state}`, async () => {
      const { miner, id, first } = await prepared();
      if (state === "cancelled")
        await ok(await reviewCalls(t, miner).cancel(id, first.assignment_id));
      else await driveAssignment(t.sql, first.assignment_id, state);
      const next = await ok(
        await reviewCalls(t, miner).retry(id, { expected_assignment_id: first.assignment_id }),
      );
      expect(next.assignment.attempt).toBe(2);
      const [submission] = await t.sql<{ state: string }[]>`
        select state from submissions where id = ${id}`;
      expect(submission!.state).toBe("review_queued");
    });
  }

  for (const state of ["rejected", "escalated"] as const) {
    it(`refuses a retry from ${state} without an operator approval (409 approval_required)`, async () => {
      const { miner, id, first } = await prepared();
      await driveAssignment(t.sql, first.assignment_id, state);
      const { retry } = reviewCalls(t, miner);
      expect(
        await refusal(await retry(id, { expected_assignment_id: first.assignment_id })),
      ).toEqual({ status: 409, code: "approval_required" });
      // A made-up approval id is no approval either.
      expect(
        await refusal(
          await retry(id, { expected_assignment_id: first.assignment_id, approval_id: "forged" }),
        ),
      ).toEqual({ status: 409, code: "approval_required" });
      const [counts] = await t.sql<{ n: number }[]>`
        select count(*)::int as n from review_assignments where submission_id = ${id}`;
      expect(counts!.n).toBe(1);
    });
  }

  it("never retries an allowed review (409 review_already_allowed)", async () => {
    const { miner, id, first } = await prepared();
    await driveAssignment(t.sql, first.assignment_id, "allowed");
    expect(
      await refusal(
        await reviewCalls(t, miner).retry(id, { expected_assignment_id: first.assignment_id }),
      ),
    ).toEqual({ status: 409, code: "review_already_allowed" });
  });

  for (const state of ["deployed", "model_call_started", "verifying"] as const) {
    it(`refuses a retry while the assignment is ${state} (409 assignment_not_terminal)`, async () => {
      const { miner, id, first } = await prepared();
      await driveAssignment(t.sql, first.assignment_id, state);
      expect(
        await refusal(
          await reviewCalls(t, miner).retry(id, { expected_assignment_id: first.assignment_id }),
        ),
      ).toEqual({ status: 409, code: "assignment_not_terminal" });
    });
  }

  it("refuses a retry by another hotkey (403) and before any prepare (404 review_session_not_found)", async () => {
    const { id, first } = await prepared();
    const attacker = reviewCalls(t, await createMinerKey());
    expect(
      await refusal(await attacker.retry(id, { expected_assignment_id: first.assignment_id })),
    ).toEqual({ status: 403, code: "not_submission_owner" });
    expect(await refusal(await attacker.cancel(id, first.assignment_id))).toEqual({
      status: 403,
      code: "not_submission_owner",
    });
    expect(await assignmentRow(first.assignment_id)).toEqual({
      state: "queued",
      nonce_state: "active",
    });
    const miner = await createMinerKey();
    const fresh = await submitAgent(t, miner);
    expect(
      await refusal(await reviewCalls(t, miner).retry(fresh, { expected_assignment_id: "none" })),
    ).toEqual({ status: 404, code: "review_session_not_found" });
  });

  it("allows at most 16 attempts per session (409 attempt_limit_reached)", async () => {
    const { miner, id, first } = await prepared();
    const { retry, cancel } = reviewCalls(t, miner);
    let current = first;
    for (let attempt = 2; attempt <= 16; attempt++) {
      await ok(await cancel(id, current.assignment_id));
      current = await ok(await retry(id, { expected_assignment_id: current.assignment_id }));
      expect(current.assignment.attempt).toBe(attempt);
    }
    await ok(await cancel(id, current.assignment_id));
    expect(
      await refusal(await retry(id, { expected_assignment_id: current.assignment_id })),
    ).toEqual({ status: 409, code: "attempt_limit_reached" });
    const [session] = await t.sql<{ attempts: number }[]>`
      select attempts from review_sessions where id = ${first.session_id}`;
    expect(session!.attempts).toBe(16);
  });

  it("concurrent retries of one assignment: exactly one new assignment, the others stale", async () => {
    const { miner, id, first } = await prepared();
    const { retry, cancel } = reviewCalls(t, miner);
    await ok(await cancel(id, first.assignment_id));
    const responses = await Promise.all(
      Array.from({ length: 12 }, () => retry(id, { expected_assignment_id: first.assignment_id })),
    );
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    for (const response of responses) {
      if (response.status !== 200) {
        expect(await refusal(response)).toEqual({ status: 409, code: "stale_assignment" });
      }
    }
    const [counts] = await t.sql<{ n: number; attempts: number }[]>`
      select (select count(*)::int from review_assignments where submission_id = ${id}) as n,
             (select attempts from review_sessions where id = ${first.session_id}) as attempts`;
    expect(counts).toEqual({ n: 2, attempts: 2 });
  });

  it("rule 5: cancel revokes only the named current assignment and its nonce", async () => {
    const a = await prepared();
    const b = await prepared();
    const response = await reviewCalls(t, a.miner).cancel(a.id, a.first.assignment_id);
    expect(await ok(response)).toEqual({
      assignment_id: a.first.assignment_id,
      state: "cancelled",
    });
    expect(await assignmentRow(a.first.assignment_id)).toEqual({
      state: "cancelled",
      nonce_state: "revoked",
    });
    // Another submission's assignment is untouched.
    expect(await assignmentRow(b.first.assignment_id)).toEqual({
      state: "queued",
      nonce_state: "active",
    });
    const [submission] = await t.sql<{ state: string }[]>`
      select state from submissions where id = ${a.id}`;
    expect(submission!.state).toBe("review_cancelled");
    // Cancelling someone else's assignment through one's own submission finds nothing.
    expect(
      await refusal(await reviewCalls(t, a.miner).cancel(a.id, b.first.assignment_id)),
    ).toEqual({ status: 404, code: "assignment_not_found" });
    expect(await assignmentRow(b.first.assignment_id)).toEqual({
      state: "queued",
      nonce_state: "active",
    });
  });

  it("cancel of a stale assignment is 409 stale_assignment; of a cancelled or verifying one, invalid_transition", async () => {
    const { miner, id, first } = await prepared();
    const { retry, cancel } = reviewCalls(t, miner);
    await ok(await cancel(id, first.assignment_id));
    // The same id again: still current, but cancelled is not cancellable.
    expect(await refusal(await cancel(id, first.assignment_id))).toEqual({
      status: 409,
      code: "invalid_transition",
    });
    const second = await ok(await retry(id, { expected_assignment_id: first.assignment_id }));
    const stale = await cancel(id, first.assignment_id);
    expect(stale.status).toBe(409);
    const body = (await stale.json()) as { code: string; current_assignment_id: string };
    expect(body).toMatchObject({
      code: "stale_assignment",
      current_assignment_id: second.assignment_id,
    });
    expect(await assignmentRow(second.assignment_id)).toEqual({
      state: "queued",
      nonce_state: "active",
    });
    // Once a report is in, cancel is refused (a miner cannot escape a pending verdict).
    await driveAssignment(t.sql, second.assignment_id, "verifying");
    expect(await refusal(await cancel(id, second.assignment_id))).toEqual({
      status: 409,
      code: "invalid_transition",
    });
  });
});
