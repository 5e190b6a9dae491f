// Operator approvals on both backends: rule 10 (validator-only, one use, bound to a prior
// immutable attempt), its 300 s expiry, and the retry it permits after rejected/escalated.
import { createMinerKey, type MinerKey, testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOperatorApproval } from "../../src/review/index.js";
import { type AgentEvalTest, startAgentEval } from "../agent-eval-kit.js";
import {
  driveAssignment,
  ok,
  type ReviewAnswer,
  refusal,
  reviewCalls,
  submitAgent,
} from "./review-test-kit.js";

interface Approval {
  approval_id: string;
  assignment_id: string;
  expires_at: string;
}

describe.each(await testBackends())("review operator approvals on %s", (backend) => {
  let t: AgentEvalTest;
  beforeAll(async () => {
    t = await startAgentEval(backend);
  });
  afterAll(() => t?.close());

  const approve = (sessionId: string, body: unknown, headers = t.internalHeaders) =>
    t.fetch(`/internal/v1/reviews/${sessionId}/approvals`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  /** A submission whose first assignment ended in `state`. */
  async function ended(
    state: string,
  ): Promise<{ miner: MinerKey; id: number; first: ReviewAnswer }> {
    const miner = await createMinerKey();
    const id = await submitAgent(t, miner);
    const first = await ok(await reviewCalls(t, miner).prepare(id));
    await driveAssignment(t.sql, first.assignment_id, state);
    return { miner, id, first };
  }

  it("rule 10: an approval is validator-only, one-use, and bound to a prior immutable attempt", async () => {
    const { miner, id, first } = await ended("rejected");
    const body = { assignment_id: first.assignment_id, reason: "false positive on rule 4" };
    // Validator-only: no token, a wrong token, a wrong slug; and the miner's signature is no
    // credential on an internal route.
    expect((await approve(first.session_id, body, {})).status).toBe(401);
    expect(
      (await approve(first.session_id, body, { ...t.internalHeaders, authorization: "Bearer x" }))
        .status,
    ).toBe(401);
    const wrongSlug = Object.fromEntries(
      Object.entries(t.internalHeaders).map(([name, value]) => [
        name,
        name === "authorization" ? value : "another-challenge",
      ]),
    );
    expect((await approve(first.session_id, body, wrongSlug)).status).toBe(403);
    const signed = await t.signedFetch(`/internal/v1/reviews/${first.session_id}/approvals`, {
      method: "POST",
      miner,
      json: body,
    });
    expect(signed.status).toBe(401);
    const [none] = await t.sql<{ n: number }[]>`
      select count(*)::int as n from review_operator_approvals where session_id = ${first.session_id}`;
    expect(none!.n).toBe(0);

    const approval = await ok<Approval>(await approve(first.session_id, body));
    expect(approval.assignment_id).toBe(first.assignment_id);
    const lifetime = Date.parse(approval.expires_at) - Date.now();
    expect(lifetime).toBeGreaterThan(240_000);
    expect(lifetime).toBeLessThanOrEqual(300_000);
    // The reason is in the history, on the approved attempt, by the operator.
    const [event] = await t.sql<{ event: string; actor: string; to_state: string }[]>`
      select event, actor, to_state from submission_status_events
      where submission_id = ${id} and event = 'approve_retry'`;
    expect(event).toEqual({ event: "approve_retry", actor: "operator", to_state: "rejected" });

    const { retry, cancel } = reviewCalls(t, miner);
    const second = await ok(
      await retry(id, {
        expected_assignment_id: first.assignment_id,
        approval_id: approval.approval_id,
      }),
    );
    expect(second.assignment.attempt).toBe(2);
    const [used] = await t.sql<{ used_by_assignment_id: string | null }[]>`
      select used_by_assignment_id from review_operator_approvals where id = ${approval.approval_id}`;
    expect(used!.used_by_assignment_id).toBe(second.assignment_id);

    // One use: after the second attempt is rejected too, the spent approval buys nothing.
    await driveAssignment(t.sql, second.assignment_id, "rejected");
    expect(
      await refusal(
        await retry(id, {
          expected_assignment_id: second.assignment_id,
          approval_id: approval.approval_id,
        }),
      ),
    ).toEqual({ status: 409, code: "approval_required" });
    // Bound to its attempt: an approval of the first attempt does not open the second either.
    const forFirst = await ok<Approval>(await approve(first.session_id, body));
    expect(
      await refusal(
        await retry(id, {
          expected_assignment_id: second.assignment_id,
          approval_id: forFirst.approval_id,
        }),
      ),
    ).toEqual({ status: 409, code: "approval_required" });
    expect(await refusal(await cancel(id, second.assignment_id))).toEqual({
      status: 409,
      code: "invalid_transition",
    });
  });

  it("an escalated attempt is retried with an approval, which cannot be replayed concurrently", async () => {
    const { miner, id, first } = await ended("escalated");
    const approval = await ok<Approval>(
      await approve(first.session_id, { assignment_id: first.assignment_id, reason: "checked" }),
    );
    const { retry } = reviewCalls(t, miner);
    const responses = await Promise.all(
      Array.from({ length: 6 }, () =>
        retry(id, {
          expected_assignment_id: first.assignment_id,
          approval_id: approval.approval_id,
        }),
      ),
    );
    expect(responses.filter((response) => response.status === 200)).toHaveLength(1);
    const [counts] = await t.sql<{ n: number }[]>`
      select count(*)::int as n from review_assignments where submission_id = ${id}`;
    expect(counts!.n).toBe(2);
  });

  it("an expired approval (older than 300 s) is no approval: 409 approval_required", async () => {
    const { miner, id, first } = await ended("rejected");
    const stale = await createOperatorApproval(t.sql, {
      sessionId: first.session_id,
      assignmentId: first.assignment_id,
      reason: "granted six minutes ago",
      now: new Date(Date.now() - 6 * 60 * 1000),
    });
    expect(Date.parse(stale.expires_at)).toBeLessThan(Date.now());
    expect(
      await refusal(
        await reviewCalls(t, miner).retry(id, {
          expected_assignment_id: first.assignment_id,
          approval_id: stale.approval_id,
        }),
      ),
    ).toEqual({ status: 409, code: "approval_required" });
    const [row] = await t.sql<{ used_at: Date | null }[]>`
      select used_at from review_operator_approvals where id = ${stale.approval_id}`;
    expect(row!.used_at).toBeNull();
  });

  it("refuses approvals for a non-terminal, freely retryable or allowed attempt, and unknown ids", async () => {
    for (const state of ["verifying", "error", "allowed"]) {
      const { first } = await ended(state);
      expect(
        await refusal(
          await approve(first.session_id, { assignment_id: first.assignment_id, reason: "x" }),
        ),
        state,
      ).toEqual({ status: 409, code: "approval_not_applicable" });
    }
    const { first } = await ended("rejected");
    const other = await ended("rejected");
    // An assignment of another session is not found in this one.
    expect(
      await refusal(
        await approve(first.session_id, { assignment_id: other.first.assignment_id, reason: "x" }),
      ),
    ).toEqual({ status: 404, code: "assignment_not_found" });
    expect(
      await refusal(await approve("no-such-session", { assignment_id: "x", reason: "x" })),
    ).toEqual({ status: 404, code: "review_session_not_found" });
    // The body is ReviewApprovalRequest: a reason is required, at most 1024 characters.
    for (const body of [
      { assignment_id: first.assignment_id },
      { assignment_id: first.assignment_id, reason: "" },
      { assignment_id: first.assignment_id, reason: "x".repeat(1025) },
    ]) {
      expect((await approve(first.session_id, body)).status).toBe(422);
    }
  });
});
