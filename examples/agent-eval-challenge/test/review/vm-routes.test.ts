// The review VM's routes and review/deployed on both backends: rules 6 (deployment metadata,
// write-once), 17 (the artifact's exact, re-hashed bytes), 18 (model-call-started binds one
// request), 19 (failure records once and revokes), and the assignment-scoped bearer under
// attack: another assignment's token, a flipped MAC character, no token, a cancelled
// assignment (GET 401, POST 410), an expired one (POST 410), and review/deployed by another
// hotkey (403).
import { createHash } from "node:crypto";
import { createMinerKey, type MinerKey, testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { transitionAssignment } from "../../src/state/index.js";
import { type AgentEvalTest, startAgentEval } from "../agent-eval-kit.js";
import {
  driveAssignment,
  ok,
  type ReviewAnswer,
  refusal,
  reviewCalls,
  sha256Hex,
  submitAgent,
} from "./review-test-kit.js";

const deployment = (assignmentId: string, vm = "vm-1") => ({
  assignment_id: assignmentId,
  vm_id: vm,
  provider_receipt: "receipt-0001",
  image_digest: `sha256:${sha256Hex("image")}`,
  compose_hash: sha256Hex("compose"),
});

const plannedCall = (requestId = "req-1") => ({
  request_id: requestId,
  provider: "openai",
  model: "gpt-4o-mini",
  endpoint_host: "api.openai.com",
  request_sha256: sha256Hex(requestId),
});

/** One character of the token's MAC changed (to another valid base64url character). */
function flipMacCharacter(token: string): string {
  const at = token.indexOf(".") + 5;
  const swapped = token[at] === "A" ? "B" : "A";
  return token.slice(0, at) + swapped + token.slice(at + 1);
}

describe.each(await testBackends())("review VM routes on %s", (backend) => {
  let t: AgentEvalTest;
  beforeAll(async () => {
    t = await startAgentEval(backend);
  });
  afterAll(() => t?.close());

  /** A miner, its submission, its first assignment and that assignment's token. */
  async function prepared(): Promise<{
    miner: MinerKey;
    id: number;
    first: ReviewAnswer;
    token: string;
  }> {
    const miner = await createMinerKey();
    const id = await submitAgent(t, miner);
    const first = await ok(await reviewCalls(t, miner).prepare(id));
    const token = first.secret_delivery?.token;
    expect(token).toBeDefined();
    return { miner, id, first, token: token! };
  }

  const vm = (assignmentId: string, token: string | null) => {
    const headers: Record<string, string> =
      token === null ? {} : { authorization: `Bearer ${token}` };
    const base = `/review/v1/assignments/${assignmentId}`;
    const post = (path: string, json: unknown) =>
      t.fetch(`${base}${path}`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify(json),
      });
    return {
      assignment: () => t.fetch(base, { headers }),
      artifact: () => t.fetch(`${base}/artifact`, { headers }),
      rules: () => t.fetch(`${base}/rules`, { headers }),
      modelCallStarted: (body: unknown) => post("/model-call-started", body),
      failure: (body: unknown) => post("/failure", body),
    };
  };

  const deployed = (miner: MinerKey, id: number, body: unknown) =>
    t.signedFetch(`/submissions/${id}/review/deployed`, { method: "POST", miner, json: body });

  const assignmentRow = async (assignmentId: string) => {
    const [row] = await t.sql<
      {
        state: string;
        nonce_state: string;
        deployed: unknown;
        model_call: unknown;
        failure: unknown;
      }[]
    >`
      select state, nonce_state, deployed, model_call, failure
      from review_assignments where id = ${assignmentId}`;
    return row!;
  };

  it("serves the assignment core, its digest and its state to its own token", async () => {
    const { first, token } = await prepared();
    const answer = await ok<Record<string, unknown>>(
      await vm(first.assignment_id, token).assignment(),
    );
    expect(answer).toEqual({
      assignment_id: first.assignment_id,
      session_id: first.session_id,
      state: "queued",
      assignment: first.assignment,
      assignment_digest: first.assignment_digest,
      expires_at: first.expires_at,
    });
  });

  it("serves the instance's rules bundle v1", async () => {
    const { first, token } = await prepared();
    const bundle = await ok<{ revision_id: string; files: unknown[] }>(
      await vm(first.assignment_id, token).rules(),
    );
    expect(bundle).toEqual(JSON.parse(JSON.stringify(t.state.rulesBundle)));
    expect(bundle.revision_id).toBe(first.assignment.rules_revision_id);
  });

  it("rule 17: the artifact route serves the exact stored ZIP bytes, re-hashed", async () => {
    const { id, first, token } = await prepared();
    const response = await vm(first.assignment_id, token).artifact();
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/zip");
    const bytes = Buffer.from(await response.arrayBuffer());
    const [stored] = await t.sql<{ artifact: Uint8Array }[]>`
      select artifact from submissions where id = ${id}`;
    expect(bytes.equals(Buffer.from(stored!.artifact))).toBe(true);
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(first.assignment.artifact_sha256);
    // The database refuses a row whose bytes and hash disagree, so a mismatch cannot be
    // produced through SQL: the comparison itself is tested in artifact-integrity.test.ts.
    await expect(
      t.sql`update submissions set artifact = ${Buffer.from("corrupt")}, size = 7 where id = ${id}`,
    ).rejects.toThrow();
  });

  it("rule 6: review/deployed records write-once metadata; identical replay 200, different 409", async () => {
    const { miner, id, first } = await prepared();
    const body = deployment(first.assignment_id);
    const answer = await ok<Record<string, unknown>>(await deployed(miner, id, body));
    expect(answer).toEqual({ assignment_id: first.assignment_id, state: "deployed", record: body });
    expect(await assignmentRow(first.assignment_id)).toMatchObject({
      state: "deployed",
      deployed: body,
    });
    // The same metadata again (a retried request, keys in another order): the same record.
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    expect(await ok<Record<string, unknown>>(await deployed(miner, id, reordered))).toEqual(answer);
    // Other metadata: refused, and the record is unchanged.
    expect(
      await refusal(await deployed(miner, id, deployment(first.assignment_id, "vm-other"))),
    ).toEqual({ status: 409, code: "deployment_conflict" });
    expect((await assignmentRow(first.assignment_id)).deployed).toEqual(body);
    // Unbounded strings are refused before anything is read.
    const long = { ...body, provider_receipt: "x".repeat(4097) };
    expect((await deployed(miner, id, long)).status).toBe(422);
  });

  it("review/deployed by another hotkey is 403 and writes nothing", async () => {
    const { id, first } = await prepared();
    const intruder = await createMinerKey();
    expect(await refusal(await deployed(intruder, id, deployment(first.assignment_id)))).toEqual({
      status: 403,
      code: "not_submission_owner",
    });
    // Its own submission cannot name someone else's assignment either.
    const ownId = await submitAgent(t, intruder);
    expect(await refusal(await deployed(intruder, ownId, deployment(first.assignment_id)))).toEqual(
      { status: 404, code: "assignment_not_found" },
    );
    expect(await assignmentRow(first.assignment_id)).toMatchObject({
      state: "queued",
      deployed: null,
    });
  });

  it("rule 18: model-call-started binds one planned request after deployed; replays", async () => {
    const { miner, id, first, token } = await prepared();
    const calls = vm(first.assignment_id, token);
    // Before deployed: the state module's refusal, nothing bound.
    expect(await refusal(await calls.modelCallStarted(plannedCall()))).toEqual({
      status: 409,
      code: "invalid_transition",
    });
    expect((await assignmentRow(first.assignment_id)).model_call).toBeNull();
    await ok(await deployed(miner, id, deployment(first.assignment_id)));
    const bound = await ok<Record<string, unknown>>(await calls.modelCallStarted(plannedCall()));
    expect(bound).toEqual({
      assignment_id: first.assignment_id,
      state: "model_call_started",
      record: plannedCall(),
    });
    expect(await assignmentRow(first.assignment_id)).toMatchObject({
      state: "model_call_started",
      model_call: plannedCall(),
    });
    // Identical replay: the same answer. Another request: 409, the first stays bound.
    expect(await ok<Record<string, unknown>>(await calls.modelCallStarted(plannedCall()))).toEqual(
      bound,
    );
    expect(await refusal(await calls.modelCallStarted(plannedCall("req-2")))).toEqual({
      status: 409,
      code: "model_call_conflict",
    });
    expect((await assignmentRow(first.assignment_id)).model_call).toEqual(plannedCall());
    // A non-hex request digest is a validation error.
    expect(
      (await calls.modelCallStarted({ ...plannedCall(), request_sha256: "not-hex" })).status,
    ).toBe(422);
  });

  it("rule 19: failure records one bounded failure and revokes the capability", async () => {
    const { first, token } = await prepared();
    const calls = vm(first.assignment_id, token);
    expect((await calls.failure({ reason_code: "Bad-Code", message: "x" })).status).toBe(422);
    expect((await calls.failure({ reason_code: "oom", message: "x".repeat(1025) })).status).toBe(
      422,
    );
    const failure = { reason_code: "provider_unavailable", message: "the provider refused" };
    expect(await ok<Record<string, unknown>>(await calls.failure(failure))).toEqual({
      assignment_id: first.assignment_id,
      state: "error",
      record: failure,
    });
    expect(await assignmentRow(first.assignment_id)).toMatchObject({
      state: "error",
      nonce_state: "revoked",
      failure,
    });
    // The capability is revoked: writes are 410 (the replay too), reads 401.
    expect(await refusal(await calls.failure(failure))).toEqual({
      status: 410,
      code: "capability_revoked",
    });
    expect(await refusal(await calls.modelCallStarted(plannedCall()))).toEqual({
      status: 410,
      code: "capability_revoked",
    });
    expect(await refusal(await calls.assignment())).toEqual({
      status: 401,
      code: "invalid_token",
    });
  });

  it("failure after a report is refused by the state module (409), recording nothing", async () => {
    const { first, token } = await prepared();
    await driveAssignment(t.sql, first.assignment_id, "verifying");
    expect(
      await refusal(
        await vm(first.assignment_id, token).failure({ reason_code: "x", message: "y" }),
      ),
    ).toEqual({ status: 409, code: "invalid_transition" });
    expect((await assignmentRow(first.assignment_id)).failure).toBeNull();
  });

  it("refuses another assignment's token, a flipped MAC character and no token (401)", async () => {
    const a = await prepared();
    const b = await prepared();
    const attacks: [string, string | null][] = [
      // b's genuine token on a's routes: the id in it is not the path's.
      ["another assignment's token", b.token],
      // a's token with one MAC character changed: well-formed, does not verify.
      ["a flipped MAC character", flipMacCharacter(a.token)],
      // b's MAC under a's id: well-formed, names the path, does not verify.
      ["a's id with b's MAC", `${a.first.assignment_id}.${b.token.split(".")[1]}`],
      ["a malformed token", "not-a-token"],
      ["no token", null],
    ];
    for (const [what, token] of attacks) {
      const calls = vm(a.first.assignment_id, token);
      for (const response of [
        await calls.assignment(),
        await calls.artifact(),
        await calls.rules(),
        await calls.failure({ reason_code: "x", message: "y" }),
      ]) {
        expect(await refusal(response), what).toEqual({ status: 401, code: "invalid_token" });
      }
    }
    // The attacks changed nothing; the genuine token still works.
    expect(await assignmentRow(a.first.assignment_id)).toMatchObject({ state: "queued" });
    await ok(await vm(a.first.assignment_id, a.token).assignment());
    // An id never issued, with a well-formed token naming it.
    expect(
      await refusal(await vm("never-issued", `never-issued.${"A".repeat(43)}`).rules()),
    ).toEqual({ status: 401, code: "invalid_token" });
  });

  it("a cancelled assignment's token: GET 401, POST 410", async () => {
    const { miner, id, first, token } = await prepared();
    await ok(await reviewCalls(t, miner).cancel(id, first.assignment_id));
    const calls = vm(first.assignment_id, token);
    for (const response of [
      await calls.assignment(),
      await calls.artifact(),
      await calls.rules(),
    ]) {
      expect(await refusal(response)).toEqual({ status: 401, code: "invalid_token" });
    }
    expect(await refusal(await calls.failure({ reason_code: "x", message: "y" }))).toEqual({
      status: 410,
      code: "capability_revoked",
    });
    expect(await refusal(await calls.modelCallStarted(plannedCall()))).toEqual({
      status: 410,
      code: "capability_revoked",
    });
    expect(await assignmentRow(first.assignment_id)).toMatchObject({
      state: "cancelled",
      failure: null,
    });
  });

  it("an expired assignment's token: POST 410, GET 401", async () => {
    const { first, token } = await prepared();
    // Past the TTL through the state module (expires_at is immutable in the database).
    const later = new Date(Date.parse(first.expires_at) + 1000);
    await t.sql.begin((tx) =>
      transitionAssignment(tx, {
        assignmentId: first.assignment_id,
        event: "expire",
        actor: "system",
        now: later,
      }),
    );
    const calls = vm(first.assignment_id, token);
    expect(await refusal(await calls.failure({ reason_code: "x", message: "y" }))).toEqual({
      status: 410,
      code: "capability_revoked",
    });
    expect(await refusal(await calls.assignment())).toEqual({ status: 401, code: "invalid_token" });
  });

  it("a token of an assignment with a verdict is 401 on reads", async () => {
    const { first, token } = await prepared();
    await driveAssignment(t.sql, first.assignment_id, "allowed");
    expect(await refusal(await vm(first.assignment_id, token).artifact())).toEqual({
      status: 401,
      code: "invalid_token",
    });
  });
});
