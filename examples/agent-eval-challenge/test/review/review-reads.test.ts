// Rules 7, 8, 9 and 11 on both backends: the owner's review history (paged, signed cursors,
// owner only, nothing secret), the public report (a deterministic redacted projection: the same
// records give the same bytes), the internal report (the full bundle, behind the challenge
// token), and the evidence objects (exact bytes; one Range -> 206; bad ranges -> 416).
import { createHash } from "node:crypto";
import { createMinerKey, testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseSingleRange } from "../../src/review/review-evidence.js";
import { type AgentEvalTest, startAgentEval } from "../agent-eval-kit.js";
import { envelopeFor, postReport, type ReadyAssignment, readyForReport } from "./report-kit.js";
import { ok, reviewCalls } from "./review-test-kit.js";

interface AuditPage {
  view: string;
  session_id: string | null;
  items: Record<string, unknown>[];
  next_cursor: string | null;
  bundle_sha256?: string;
}

const evidenceBytes = Buffer.from("0123456789abcdefghij"); // 20 bytes

describe.each(await testBackends())("review reads on %s", (backend) => {
  let t: AgentEvalTest;
  /** A submission with three attempts: cancelled, cancelled, then reported and allowed. */
  let ready: ReadyAssignment;
  let internal: Record<string, string>;

  beforeAll(async () => {
    t = await startAgentEval(backend);
    internal = t.internalHeaders;
    ready = await readyForReport(t);
    const calls = reviewCalls(t, ready.miner);
    // Two cancelled attempts before the reported one: three pages of one at limit=1.
    let current = ready.answer.assignment_id;
    for (let i = 0; i < 2; i++) {
      expect((await calls.cancel(ready.submissionId, current)).status).toBe(200);
      const next = await ok(
        await calls.retry(ready.submissionId, { expected_assignment_id: current }),
      );
      current = next.assignment_id;
      ready = { ...ready, answer: next, token: next.secret_delivery!.token };
    }
    ready = await bindModelCall(ready);
    const envelope = await envelopeFor(ready, {
      evidence: [{ name: "notes.txt", mediaType: "text/plain", bytes: evidenceBytes }],
    });
    expect((await postReport(t, ready, envelope)).status).toBe(202);
  });
  afterAll(() => t?.close());

  async function bindModelCall(at: ReadyAssignment): Promise<ReadyAssignment> {
    const deployed = await t.signedFetch(`/submissions/${at.submissionId}/review/deployed`, {
      method: "POST",
      miner: at.miner,
      json: {
        assignment_id: at.answer.assignment_id,
        vm_id: "vm-reads",
        provider_receipt: "receipt",
        image_digest: `sha256:${"ab".repeat(32)}`,
        compose_hash: "cd".repeat(32),
      },
    });
    expect(deployed.status).toBe(200);
    const started = await t.fetch(
      `/review/v1/assignments/${at.answer.assignment_id}/model-call-started`,
      {
        method: "POST",
        headers: { authorization: `Bearer ${at.token}`, "content-type": "application/json" },
        body: JSON.stringify({
          ...at.modelCall,
          provider: "none",
          model: "none",
          endpoint_host: "none",
        }),
      },
    );
    expect(started.status).toBe(200);
    return at;
  }

  const history = (query = "", miner = ready.miner) =>
    t.signedFetch(`/submissions/${ready.submissionId}/review/history${query}`, { miner });
  const publicReport = (query = "") =>
    t.signedFetch(`/submissions/${ready.submissionId}/review/report${query}`, {
      miner: ready.miner,
    });

  it("rule 7: pages the owner's history newest first with signed cursors, nothing secret", async () => {
    const first = await ok<AuditPage>(await history("?limit=1"));
    expect(first.view).toBe("history");
    expect(first.items.map((item) => item.attempt)).toEqual([3]);
    expect(first.items[0]).toMatchObject({ state: "allowed", outcome: "allowed" });
    const second = await ok<AuditPage>(await history(`?limit=1&cursor=${first.next_cursor}`));
    expect(second.items.map((item) => [item.attempt, item.state])).toEqual([[2, "cancelled"]]);
    const third = await ok<AuditPage>(await history(`?limit=1&cursor=${second.next_cursor}`));
    expect(third.items.map((item) => item.attempt)).toEqual([1]);
    expect(third.next_cursor).toBeNull();
    const all = await ok<AuditPage>(await history());
    expect(all.items).toHaveLength(3);
    const text = JSON.stringify(all);
    expect(text).not.toContain(ready.token.split(".")[1]!);
    expect(text).not.toContain((ready.answer.assignment as { nonce: string }).nonce);
    expect(text).not.toContain("notes.txt");
  });

  it("rule 7: another hotkey is refused (403), an altered cursor is 400, limit > 16 is 422", async () => {
    const stranger = await createMinerKey();
    const refused = await history("", stranger);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { code: string }).code).toBe("not_submission_owner");
    const first = await ok<AuditPage>(await history("?limit=1"));
    const cursor = first.next_cursor!;
    const altered = `${cursor.slice(0, 3)}${cursor[3] === "A" ? "B" : "A"}${cursor.slice(4)}`;
    const bad = await history(`?limit=1&cursor=${altered}`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { code: string }).code).toBe("invalid_cursor");
    // A history cursor is not a public report cursor (scoped).
    expect((await publicReport(`?cursor=${cursor}`)).status).toBe(400);
    expect((await history("?limit=17")).status).toBe(422);
    expect((await history(`?cursor=${"a".repeat(513)}`)).status).toBe(422);
  });

  it("rule 8: the public report is a redacted projection with the same bytes every time", async () => {
    const one = await publicReport();
    const two = await publicReport();
    const bytes = await one.text();
    expect(await two.text()).toBe(bytes);
    expect(one.headers.get("etag")).toBe(`"${createHash("sha256").update(bytes).digest("hex")}"`);
    const page = JSON.parse(bytes) as AuditPage;
    expect(page.view).toBe("public_report");
    // Only the reported attempt; cancelled ones had no report.
    expect(page.items).toHaveLength(1);
    expect(page.items[0]).toMatchObject({
      attempt: 3,
      verdict: "allow",
      outcome: "allowed",
      verifier: "dev",
      confidential: false,
      evidence: [{ name: "notes.txt", media_type: "text/plain", length: 20 }],
    });
    expect(bytes).not.toContain("no finding"); // the summary
    expect(bytes).not.toContain((ready.answer.assignment as { nonce: string }).nonce);
    expect(bytes).not.toContain("object_ref");
    // Any signed caller may read it (it is public).
    const stranger = await createMinerKey();
    const other = await t.signedFetch(`/submissions/${ready.submissionId}/review/report`, {
      miner: stranger,
    });
    expect(await other.text()).toBe(bytes);
  });

  it("rule 9: the internal report is the full bundle, behind the challenge token", async () => {
    const sessionId = ready.answer.session_id;
    const refused = await t.fetch(`/internal/v1/reviews/${sessionId}/report`);
    expect(refused.status).toBe(401);
    const page = await ok<AuditPage>(
      await t.fetch(`/internal/v1/reviews/${sessionId}/report`, { headers: internal }),
    );
    expect(page.view).toBe("internal_report");
    expect(page.items).toHaveLength(3);
    const reported = page.items[0]!;
    expect(reported).toMatchObject({
      attempt: 3,
      core: { nonce: (ready.answer.assignment as { nonce: string }).nonce },
      deployed: { vm_id: "vm-reads" },
      verification: { status: "verified", outcome: "allowed" },
      evidence: [{ object_ref: `${ready.answer.assignment_id}.notes.txt`, length: 20 }],
    });
    expect((reported.envelope as { review_digest: string }).review_digest).toMatch(
      /^[0-9a-f]{64}$/,
    );
    expect(JSON.stringify(reported.envelope)).not.toContain(evidenceBytes.toString("base64"));
    expect(page.bundle_sha256).toMatch(/^[0-9a-f]{64}$/);
    const missing = await t.fetch("/internal/v1/reviews/no-such-session/report", {
      headers: internal,
    });
    expect(missing.status).toBe(404);
  });

  it("rule 11: serves one exact evidence object, one range as 206, bad ranges as 416", async () => {
    const path = `/internal/v1/reviews/${ready.answer.session_id}/evidence/${ready.answer.assignment_id}.notes.txt`;
    const get = (range?: string) =>
      t.fetch(path, { headers: range === undefined ? internal : { ...internal, range } });
    const whole = await get();
    expect(whole.status).toBe(200);
    expect(Buffer.from(await whole.arrayBuffer())).toEqual(evidenceBytes);
    expect(whole.headers.get("x-evidence-sha256")).toBe(
      createHash("sha256").update(evidenceBytes).digest("hex"),
    );
    expect(whole.headers.get("accept-ranges")).toBe("bytes");

    const cases: [string, number, string | null, string | null][] = [
      ["bytes=0-4", 206, "01234", "bytes 0-4/20"],
      ["bytes=15-", 206, "fghij", "bytes 15-19/20"],
      ["bytes=-3", 206, "hij", "bytes 17-19/20"],
      ["bytes=18-100", 206, "ij", "bytes 18-19/20"],
      ["bytes=-100", 206, evidenceBytes.toString(), "bytes 0-19/20"],
      ["bytes=20-", 416, null, "bytes */20"],
      ["bytes=5-2", 416, null, "bytes */20"],
      ["bytes=0-1,4-5", 416, null, "bytes */20"],
      ["bytes=-0", 416, null, "bytes */20"],
      ["items=0-4", 416, null, "bytes */20"],
      ["bytes=-", 416, null, "bytes */20"],
    ];
    for (const [range, status, body, contentRange] of cases) {
      const response = await get(range);
      expect([range, response.status]).toEqual([range, status]);
      expect(response.headers.get("content-range")).toBe(contentRange);
      const text = await response.text();
      if (body !== null) expect(text).toBe(body);
      else expect(JSON.parse(text).code).toBe("range_not_satisfiable");
    }
    const missing = await t.fetch(
      `/internal/v1/reviews/${ready.answer.session_id}/evidence/${ready.answer.assignment_id}.other.txt`,
      { headers: internal },
    );
    expect(missing.status).toBe(404);
    expect((await t.fetch(path)).status).toBe(401);
  });

  it("rule 11: a sealed object moved to another ref no longer opens (500, no byte served)", async () => {
    const fresh = await readyForReport(t);
    const answer = await postReport(
      t,
      fresh,
      await envelopeFor(fresh, {
        evidence: [{ name: "a.txt", mediaType: "text/plain", bytes: Buffer.from("secret-a") }],
      }),
    );
    expect(answer.status).toBe(202);
    // Copy the sealed box of a.txt under another name: its associated data no longer matches.
    await t.sql`
      insert into review_evidence (session_id, object_ref, assignment_id, name, media_type, length, sha256, sealed)
      select session_id, assignment_id || '.b.txt', assignment_id, 'b.txt', media_type, length, sha256, sealed
      from review_evidence where assignment_id = ${fresh.answer.assignment_id} and name = 'a.txt'`;
    const moved = await t.fetch(
      `/internal/v1/reviews/${fresh.answer.session_id}/evidence/${fresh.answer.assignment_id}.b.txt`,
      { headers: internal },
    );
    expect(moved.status).toBe(500);
    const text = await moved.text();
    expect(JSON.parse(text).code).toBe("evidence_integrity_failure");
    expect(text).not.toContain("secret-a");
  });
});

describe("parseSingleRange", () => {
  it("takes exactly one satisfiable bytes range", () => {
    expect(parseSingleRange("bytes=0-0", 1)).toEqual({ first: 0, last: 0 });
    expect(parseSingleRange(" bytes=2-", 5)).toEqual({ first: 2, last: 4 });
    expect(parseSingleRange("bytes=0-", 0)).toHaveProperty("unsatisfiable");
    expect(parseSingleRange("bytes=1-2, 3-4", 10)).toHaveProperty("unsatisfiable");
    expect(parseSingleRange("bytes=a-b", 10)).toHaveProperty("unsatisfiable");
  });
});
