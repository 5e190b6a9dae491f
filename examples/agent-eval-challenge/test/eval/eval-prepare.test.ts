// Rule 12 on both backends: eval/prepare issues one immutable run only after a launch and a
// verified allow that re-verifies on every prepare (never a cached status), delivers its token
// once (also under 20 concurrent prepares), answers the same plan afterwards, issues nothing
// while the verifier is unavailable, and refuses an allow older than 24 h. And eval/status.
import { createHash } from "node:crypto";
import { testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { QuoteVerifier } from "../../src/attestation/index.js";
import { canonicalDigest, type JsonValue } from "../../src/crypto/index.js";
import { verifyAllow } from "../../src/eval/verified-allow.js";
import { type AgentEvalTest, startAgentEval } from "../agent-eval-kit.js";
import {
  envelopeFor,
  postReport,
  type ReadyAssignment,
  readyForReport,
} from "../review/report-kit.js";

interface Prepared {
  run_id: string;
  state: string;
  plan: Record<string, unknown> & { task_set: { task_ids: string[] }; run_token_sha256: string };
  plan_digest: string;
  secret_delivery?: { env_key: string; token: string };
}

describe.each(await testBackends())("eval prepare (rule 12) on %s", (backend) => {
  let t: AgentEvalTest;
  beforeAll(async () => {
    t = await startAgentEval(backend);
  });
  afterAll(() => t?.close());

  const prepare = (ready: ReadyAssignment) =>
    t.signedFetch(`/submissions/${ready.submissionId}/eval/prepare`, {
      method: "POST",
      miner: ready.miner,
    });
  const launch = async (ready: ReadyAssignment) => {
    const base = `/submissions/${ready.submissionId}`;
    expect(
      (await t.signedFetch(`${base}/env/confirm-empty`, { method: "POST", miner: ready.miner }))
        .status,
    ).toBe(200);
    expect(
      (await t.signedFetch(`${base}/launch`, { method: "POST", miner: ready.miner })).status,
    ).toBe(200);
  };
  const allowed = async (): Promise<ReadyAssignment> => {
    const ready = await readyForReport(t);
    expect((await postReport(t, ready, await envelopeFor(ready))).status).toBe(202);
    return ready;
  };
  const code = async (response: Response) => ((await response.json()) as { code: string }).code;
  const runCount = async (ready: ReadyAssignment) => {
    const [row] = await t.sql<{ n: number }[]>`
      select count(*)::int as n from eval_runs where submission_id = ${ready.submissionId}`;
    return row!.n;
  };

  it("needs a launch (409 not_launched) and a verified allow (409 review_not_allowed)", async () => {
    const pending = await readyForReport(t);
    expect(await code(await prepare(pending))).toBe("not_launched");
    await launch(pending);
    const notYet = await prepare(pending);
    expect(notYet.status).toBe(409);
    expect(await code(notYet)).toBe("review_not_allowed");
    // A rejected review never opens eval.
    const rejected = await readyForReport(t);
    expect(
      (await postReport(t, rejected, await envelopeFor(rejected, { verdict: "reject" }))).status,
    ).toBe(202);
    await launch(rejected);
    expect(await code(await prepare(rejected))).toBe("review_not_allowed");
    expect(await runCount(rejected)).toBe(0);
  });

  it("issues one immutable run with its token once, then answers the same plan", async () => {
    const ready = await allowed();
    await launch(ready);
    const first = (await (await prepare(ready)).json()) as Prepared;
    expect(first.state).toBe("prepared");
    const token = first.secret_delivery!.token;
    expect(first.secret_delivery!.env_key).toBe("EVAL_RUN_TOKEN");
    expect(first.plan).toMatchObject({
      schema_version: "eval-plan/v1",
      run_id: first.run_id,
      submission_id: ready.submissionId,
      review: { assignment_id: ready.answer.assignment_id },
      trials: 2,
      run_token_sha256: createHash("sha256").update(token).digest("hex"),
    });
    expect(first.plan.task_set.task_ids).toHaveLength(8);
    expect(first.plan_digest).toBe(canonicalDigest(first.plan as unknown as JsonValue));
    const again = (await (await prepare(ready)).json()) as Prepared;
    expect(again.secret_delivery).toBeUndefined();
    expect({ ...again }).toEqual({
      ...first,
      secret_delivery: undefined,
      state: "prepared",
    } as never);
    const [submission] = await t.sql<{ state: string; current_eval_run_id: string }[]>`
      select state, current_eval_run_id from submissions where id = ${ready.submissionId}`;
    expect(submission).toEqual({ state: "eval_running", current_eval_run_id: first.run_id });
  });

  it("gives one token to 20 concurrent prepares", async () => {
    const ready = await allowed();
    await launch(ready);
    const answers = await Promise.all(Array.from({ length: 20 }, () => prepare(ready)));
    const bodies = (await Promise.all(answers.map((answer) => answer.json()))) as Prepared[];
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    expect(bodies.filter((body) => body.secret_delivery !== undefined)).toHaveLength(1);
    expect(new Set(bodies.map((body) => body.run_id)).size).toBe(1);
    expect(await runCount(ready)).toBe(1);
  });

  it("re-verifies the stored allow on every prepare: an outage issues nothing, a refusal is 409", async () => {
    const ready = await allowed();
    await launch(ready);
    const working = t.state.verifier;
    const swap = (verify: QuoteVerifier["verify"]) => {
      t.state.verifier = { kind: working.kind, confidential: working.confidential, verify };
    };
    try {
      swap(async () => ({
        status: "unavailable",
        code: "collateral_unavailable",
        message: "down",
      }));
      const parked = await prepare(ready);
      expect(parked.status).toBe(503);
      expect(await code(parked)).toBe("verifier_unavailable");
      swap(async () => ({
        status: "rejected",
        code: "quote_signature_invalid",
        message: "revoked",
      }));
      const refused = await prepare(ready);
      expect(refused.status).toBe(409);
      expect(await code(refused)).toBe("review_not_allowed");
      expect(await runCount(ready)).toBe(0);
    } finally {
      t.state.verifier = working;
    }
    expect((await prepare(ready)).status).toBe(200);
    expect(await runCount(ready)).toBe(1);
  });

  it("refuses an allow older than 24 hours (review_stale)", async () => {
    const ready = await allowed();
    const verify = (now: Date) =>
      verifyAllow(t.sql, {
        submissionId: String(ready.submissionId),
        verifier: t.state.verifier,
        now,
      });
    await expect(verify(new Date())).resolves.toMatchObject({
      assignmentId: ready.answer.assignment_id,
    });
    await expect(verify(new Date(Date.now() + 25 * 3600_000))).rejects.toMatchObject({
      status: 409,
      code: "review_stale",
    });
  });

  it("eval/status lists the runs; a cursor over 512 characters is a 422, a forged one 400", async () => {
    const ready = await allowed();
    await launch(ready);
    const issued = (await (await prepare(ready)).json()) as Prepared;
    const status = t.signedFetch(`/submissions/${ready.submissionId}/eval/status`, {
      miner: ready.miner,
    });
    const page = (await (await status).json()) as {
      current_run_id: string;
      items: { run_id: string; state: string }[];
    };
    expect(page.current_run_id).toBe(issued.run_id);
    expect(page.items).toEqual([
      expect.objectContaining({ run_id: issued.run_id, state: "prepared" }),
    ]);
    const long = await t.signedFetch(
      `/submissions/${ready.submissionId}/eval/status?cursor=${"a".repeat(513)}`,
      { miner: ready.miner },
    );
    expect(long.status).toBe(422);
    const forged = await t.signedFetch(
      `/submissions/${ready.submissionId}/eval/status?cursor=eyJ2IjoxfQ.AAAA`,
      { miner: ready.miner },
    );
    expect(forged.status).toBe(400);
    expect(((await forged.json()) as { code: string }).code).toBe("invalid_cursor");
  });
});
