// review/prepare on both backends: rule 3 (the current immutable assignment, its token exactly
// once, even under 50 concurrent prepares), ownership (403) and unknown ids (404), the digest of
// the returned core, the token's stored hash and MAC, and lazy expiry on the next prepare.

import { createMinerKey, testBackends } from "@platform/challenge-sdk/testing";
import { verifyCapabilityToken } from "@platform/challenge-sdk/tokens";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalDigest, capabilityScope } from "../../src/crypto/index.js";
import { prepareReview } from "../../src/review/index.js";
import { type AgentEvalTest, startAgentEval } from "../agent-eval-kit.js";
import { ok, refusal, reviewCalls, sha256Hex, submitAgent } from "./review-test-kit.js";

describe.each(await testBackends())("review prepare on %s", (backend) => {
  let t: AgentEvalTest;
  beforeAll(async () => {
    t = await startAgentEval(backend);
  });
  afterAll(() => t?.close());

  it("rule 3: returns the current immutable assignment and delivers its token exactly once", async () => {
    const miner = await createMinerKey();
    const id = await submitAgent(t, miner);
    const { prepare } = reviewCalls(t, miner);
    const first = await ok(await prepare(id));
    expect(first.state).toBe("queued");
    expect(first.secret_delivery?.env_key).toBe("REVIEW_SESSION_TOKEN");
    const token = first.secret_delivery!.token;
    expect(token.startsWith(`${first.assignment_id}.`)).toBe(true);

    const second = await ok(await prepare(id));
    const third = await ok(await prepare(id));
    for (const later of [second, third]) {
      expect(later.secret_delivery).toBeUndefined();
      // The same immutable assignment, byte for byte.
      const { secret_delivery: _, ...rest } = first;
      expect(later).toEqual(rest);
    }

    // Only the token's sha256 is stored, and the token is the live capability of this assignment.
    const [row] = await t.sql<{ token_sha256: string; token_delivered_at: Date | null }[]>`
      select token_sha256, token_delivered_at from review_assignments
      where id = ${first.assignment_id}`;
    expect(row!.token_sha256).toBe(sha256Hex(token));
    expect(row!.token_delivered_at).not.toBeNull();
    const review = capabilityScope(t.state.secretKey, "reviewAssignment");
    const storedHash = row!.token_sha256;
    expect(verifyCapabilityToken(token, { ...review, storedHash })).toMatchObject({
      ok: true,
      id: first.assignment_id,
    });
    // The token opens nothing in another scope, under either key.
    const run = capabilityScope(t.state.secretKey, "evalRun");
    expect(verifyCapabilityToken(token, { ...run, storedHash }).ok).toBe(false);
    expect(verifyCapabilityToken(token, { ...review, scope: run.scope, storedHash }).ok).toBe(
      false,
    );
    // The token appears nowhere in the database (it is not in the core, nor in any event).
    const [dump] = await t.sql<{ text: string }[]>`
      select coalesce(string_agg(a::text, ''), '') || coalesce(
        (select string_agg(e::text, '') from submission_status_events e
         where e.submission_id = ${id}), '') as text
      from review_assignments a where a.submission_id = ${id}`;
    expect(dump!.text).not.toContain(token.split(".")[1]!);
  });

  it("answers an immutable core whose digest is canonicalDigest(core), bound to the submission and rules", async () => {
    const miner = await createMinerKey();
    const id = await submitAgent(t, miner);
    const answer = await ok(await reviewCalls(t, miner).prepare(id));
    expect(answer.assignment_digest).toBe(canonicalDigest(answer.assignment));
    expect(answer.assignment_digest).toMatch(/^[0-9a-f]{64}$/);
    const [submission] = await t.sql<{ artifact_sha256: string; size: number; state: string }[]>`
      select artifact_sha256, size, state from submissions where id = ${id}`;
    expect(answer.assignment).toMatchObject({
      schema_version: "review-assignment/v1",
      assignment_id: answer.assignment_id,
      session_id: answer.session_id,
      submission_id: id,
      attempt: 1,
      artifact_sha256: submission!.artifact_sha256,
      artifact_size: submission!.size,
      rules_revision_id: t.state.rulesBundle.revision_id,
      expires_at: answer.expires_at,
    });
    expect(answer.assignment.nonce).toMatch(/^[A-Za-z0-9_-]{16,128}$/);
    const issued = Date.parse(String(answer.assignment["issued_at"]));
    expect(Date.parse(answer.expires_at) - issued).toBe(30 * 60 * 1000);
    // Stored as issued: the core and its digest; the submission moved to review_queued.
    const [stored] = await t.sql<{ core: Record<string, unknown>; core_sha256: string }[]>`
      select core, core_sha256 from review_assignments where id = ${answer.assignment_id}`;
    expect(stored!.core).toEqual(answer.assignment);
    expect(stored!.core_sha256).toBe(answer.assignment_digest);
    expect(submission!.state).toBe("review_queued");
    const events = await t.sql<{ machine: string; event: string; to_state: string }[]>`
      select machine, event, to_state from submission_status_events
      where submission_id = ${id} order by seq`;
    expect(events).toEqual([
      { machine: "submission", event: "receive", to_state: "received" },
      { machine: "assignment", event: "issue", to_state: "queued" },
      { machine: "submission", event: "review_issue", to_state: "review_queued" },
    ]);
  });

  it("refuses another hotkey (403 not_submission_owner) and an unknown submission (404), creating nothing", async () => {
    const owner = await createMinerKey();
    const id = await submitAgent(t, owner);
    const attacker = reviewCalls(t, await createMinerKey());
    expect(await refusal(await attacker.prepare(id))).toEqual({
      status: 403,
      code: "not_submission_owner",
    });
    const [sessions] = await t.sql<{ n: number }[]>`
      select count(*)::int as n from review_sessions where submission_id = ${id}`;
    expect(sessions!.n).toBe(0);
    // Once the owner prepared, the attacker still gets neither the assignment nor the token.
    await ok(await reviewCalls(t, owner).prepare(id));
    expect((await attacker.prepare(id)).status).toBe(403);
    expect(await refusal(await attacker.prepare(987654321))).toEqual({
      status: 404,
      code: "submission_not_found",
    });
  });

  it("refuses to start a review of a submission that is past review without a session (409)", async () => {
    const miner = await createMinerKey();
    const id = await submitAgent(t, miner);
    // Not reachable through the routes: a row moved by hand (an operator's repair, a bug).
    await t.sql`update submissions set state = 'review_error' where id = ${id}`;
    expect(await refusal(await reviewCalls(t, miner).prepare(id))).toEqual({
      status: 409,
      code: "review_not_available",
    });
    const [sessions] = await t.sql<{ n: number }[]>`
      select count(*)::int as n from review_sessions where submission_id = ${id}`;
    expect(sessions!.n).toBe(0);
  });

  it("50 concurrent prepares of one submission: exactly one answer carries the token", async () => {
    const miner = await createMinerKey();
    const id = await submitAgent(t, miner);
    const { prepare } = reviewCalls(t, miner);
    const answers = await Promise.all(
      Array.from({ length: 50 }, async () => ok(await prepare(id))),
    );
    const withToken = answers.filter((answer) => answer.secret_delivery !== undefined);
    expect(withToken).toHaveLength(1);
    expect(answers.length - withToken.length).toBe(49);
    expect(new Set(answers.map((answer) => answer.assignment_id)).size).toBe(1);
    expect(new Set(answers.map((answer) => answer.assignment_digest)).size).toBe(1);
    const [counts] = await t.sql<{ sessions: number; assignments: number }[]>`
      select (select count(*)::int from review_sessions where submission_id = ${id}) as sessions,
             (select count(*)::int from review_assignments where submission_id = ${id}) as assignments`;
    expect(counts).toEqual({ sessions: 1, assignments: 1 });
  });

  it("lazy expiry: an assignment past its 30 min is expired by the next prepare, and retry then works", async () => {
    const miner = await createMinerKey();
    const id = await submitAgent(t, miner);
    // Issued 31 minutes ago (the service's own operation, given an earlier clock).
    const old = await prepareReview(t.sql, {
      submissionId: String(id),
      hotkey: miner.hotkey,
      secretKey: t.state.secretKey,
      rulesRevisionId: t.state.rulesBundle.revision_id,
      now: new Date(Date.now() - 31 * 60 * 1000),
    });
    const { prepare, retry } = reviewCalls(t, miner);
    const seen = await ok(await prepare(id));
    expect(seen.assignment_id).toBe(old.assignment_id);
    expect(seen.state).toBe("expired");
    expect(seen.secret_delivery).toBeUndefined();
    const [row] = await t.sql<{ nonce_state: string; state: string }[]>`
      select a.nonce_state, s.state from review_assignments a
      join submissions s on s.id = a.submission_id where a.id = ${old.assignment_id}`;
    expect(row).toEqual({ nonce_state: "revoked", state: "review_expired" });

    const fresh = await ok(await retry(id, { expected_assignment_id: old.assignment_id }));
    expect(fresh.assignment.attempt).toBe(2);
    expect(fresh.state).toBe("queued");
    expect(fresh.secret_delivery).toBeDefined();
    expect(Date.parse(fresh.expires_at)).toBeGreaterThan(Date.now() + 29 * 60 * 1000);
  });
});
