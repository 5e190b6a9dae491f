// Rule 20: the report route receipts and verifies one immutable, quote-bound review envelope.
// On both backends: the verdicts, first receipt 202 / identical replay 200 / different 409,
// every part of the envelope tampered with (each rejected with its own code and its nonce
// consumed), "verifier unavailable" (503, nonce kept, the same envelope verified later),
// concurrent identical posts, the evidence sealed at rest, and the refusals around it.
import { createHash, generateKeyPairSync } from "node:crypto";
import { testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { measuredEvent } from "../../src/attestation/index.js";
import { type AgentEvalTest, startAgentEval, withVerifier } from "../agent-eval-kit.js";
import {
  type EnvelopeOptions,
  envelopeFor,
  postReport,
  type ReadyAssignment,
  readyForReport,
  sha384Hex,
  vmFetch,
} from "./report-kit.js";
import { reviewCalls, sha256Hex } from "./review-test-kit.js";

interface Receipt {
  assignment_id: string;
  state: string;
  receipt_sha256: string;
  review_digest: string;
  verification: {
    status: string;
    outcome: string;
    code: string | null;
    verifier: string;
    confidential: boolean;
    measurement: string | null;
  };
}

const otherKeyPem = generateKeyPairSync("ec", { namedCurve: "P-256" })
  .privateKey.export({ type: "pkcs8", format: "pem" })
  .toString();

describe.each(await testBackends())("review report (rule 20) on %s", (backend) => {
  let t: AgentEvalTest;
  beforeAll(async () => {
    t = await startAgentEval(backend);
  });
  afterAll(() => t?.close());

  const row = async (assignmentId: string) => {
    const [found] = await t.sql<{ state: string; nonce_state: string; verification: unknown }[]>`
      select state, nonce_state, verification from review_assignments where id = ${assignmentId}`;
    return found!;
  };
  const submissionState = async (id: number) => {
    const [found] = await t.sql<
      { state: string }[]
    >`select state from submissions where id = ${id}`;
    return found!.state;
  };

  async function report(ready: ReadyAssignment, options: EnvelopeOptions = {}) {
    const response = await postReport(t, ready, await envelopeFor(ready, options));
    const text = await response.text();
    return { status: response.status, body: JSON.parse(text) as Receipt & { code?: string } };
  }

  it("allows on a verified allow: 202, nonce consumed, submission review_allowed", async () => {
    const ready = await readyForReport(t);
    const envelope = await envelopeFor(ready);
    const first = await postReport(t, ready, envelope);
    expect(first.status).toBe(202);
    const receipt = (await first.json()) as Receipt;
    expect(receipt).toMatchObject({
      assignment_id: ready.answer.assignment_id,
      state: "allowed",
      review_digest: envelope.review_digest,
      verification: {
        status: "verified",
        outcome: "allowed",
        code: null,
        verifier: "dev",
        confidential: false,
      },
    });
    expect(await row(ready.answer.assignment_id)).toMatchObject({
      state: "allowed",
      nonce_state: "consumed",
    });
    expect(await submissionState(ready.submissionId)).toBe("review_allowed");

    // An identical replay: 200, the same receipt; a different envelope: 409.
    const replay = await postReport(t, ready, envelope);
    expect(replay.status).toBe(200);
    expect(await replay.json()).toEqual(receipt);
    const other = await postReport(t, ready, await envelopeFor(ready, { verdict: "reject" }));
    expect(other.status).toBe(409);
    expect(((await other.json()) as { code: string }).code).toBe("report_conflict");
    // The capability is spent for reads.
    expect((await vmFetch(t, ready.answer.assignment_id, ready.token).get()).status).toBe(401);
  });

  it.each([
    ["reject", "rejected", "review_rejected"],
    ["escalate", "escalated", "review_escalated"],
  ] as const)(
    "a verified %s verdict leaves the assignment %s",
    async (verdict, state, submission) => {
      const ready = await readyForReport(t);
      const answer = await report(ready, { verdict });
      expect(answer.status).toBe(202);
      expect(answer.body.verification).toMatchObject({ status: "verified", outcome: state });
      expect(await row(ready.answer.assignment_id)).toMatchObject({
        state,
        nonce_state: "consumed",
      });
      expect(await submissionState(ready.submissionId)).toBe(submission);
    },
  );

  // Each part of the envelope tampered with, honest everywhere else: rejected with its own code.
  const future = () => new Date(Date.now() + 10 * 60_000).toISOString();
  const tampering: [
    string,
    string,
    (ready: ReadyAssignment) => EnvelopeOptions | Promise<unknown>,
  ][] = [
    [
      "review_digest not the core's",
      "review_digest_mismatch",
      async (ready) => {
        const envelope = await envelopeFor(ready);
        envelope.review_core.summary = "edited after digesting";
        return envelope;
      },
    ],
    [
      "another assignment digest",
      "assignment_digest_mismatch",
      () => ({ assignmentDigest: sha256Hex("x") }),
    ],
    [
      "evidence bytes changed",
      "evidence_mismatch",
      async (ready) => {
        const envelope = await envelopeFor(ready);
        envelope.evidence[0]!.content_b64 = Buffer.from('{"findings":[1]}').toString("base64");
        return envelope;
      },
    ],
    [
      "an evidence object the core does not name",
      "evidence_mismatch",
      async (ready) => {
        const envelope = await envelopeFor(ready);
        envelope.evidence.push({ name: "extra.txt", content_b64: "AAAA" });
        return envelope;
      },
    ],
    [
      "another artifact",
      "assignment_binding_mismatch",
      () => ({
        editCore: (core) => {
          core.artifact_sha256 = sha256Hex("other");
        },
      }),
    ],
    [
      "another model request",
      "model_call_mismatch",
      (ready) => ({
        modelCall: {
          ...ready.modelCall,
          request_sha256: sha256Hex("other"),
          response_sha256: null,
        },
      }),
    ],
    [
      "report_data_hex flipped",
      "report_data_binding_mismatch",
      async (ready) => {
        const envelope = await envelopeFor(ready);
        const last = envelope.report_data_hex.at(-1) === "0" ? "1" : "0";
        envelope.report_data_hex = envelope.report_data_hex.slice(0, -1) + last;
        return envelope;
      },
    ],
    ["reported in the future", "time_order_invalid", () => ({ reportedAt: future() })],
    [
      "reported before the assignment was issued",
      "time_order_invalid",
      () => ({ reportedAt: new Date(Date.now() - 3_600_000).toISOString() }),
    ],
    [
      "a quote signed by another key",
      "quote_attestation_key_untrusted",
      () => ({ quoteKeyPem: otherKeyPem }),
    ],
    [
      "a quote over other report_data",
      "report_data_mismatch",
      () => ({ quoteReportData: Buffer.alloc(64, 7) }),
    ],
    [
      "a measurement outside the allow-list",
      "measurement_not_allowed",
      () => ({ quoteMeasurement: sha384Hex("another VM") }),
    ],
    [
      "an event log that does not replay to the quote's RTMRs",
      "event_log_mismatch",
      () => ({
        eventLog: [measuredEvent(3, "reviewer", "claimed")],
        quoteRtmrs: ["00".repeat(48), "00".repeat(48), "00".repeat(48), sha384Hex("x")],
      }),
    ],
    [
      "a claimed measurement other than the quote's",
      "measurement_mismatch",
      () => ({ claimedMeasurement: sha384Hex("claimed") }),
    ],
    [
      "a quote with one bit flipped",
      "quote_signature_invalid",
      async (ready) => {
        const envelope = await envelopeFor(ready);
        const quote = Buffer.from(envelope.attestation.quote, "base64");
        quote[48 + 100]! ^= 0x01; // a byte of the TD report body, under the signature
        envelope.attestation.quote = quote.toString("base64");
        return envelope;
      },
    ],
  ];

  it.each(tampering)("rejects %s with %s, consuming the nonce", async (_what, code, tamper) => {
    const ready = await readyForReport(t);
    const made = await tamper(ready);
    const envelope =
      made !== null && typeof made === "object" && "schema_version" in made
        ? made
        : await envelopeFor(ready, made as EnvelopeOptions);
    const response = await postReport(t, ready, envelope);
    const text = await response.text();
    expect(response.status, text).toBe(202);
    expect(JSON.parse(text).verification).toMatchObject({
      status: "rejected",
      outcome: "rejected",
      code,
    });
    expect(await row(ready.answer.assignment_id)).toMatchObject({
      state: "rejected",
      nonce_state: "consumed",
    });
    expect(await submissionState(ready.submissionId)).toBe("review_rejected");
  });

  it("keeps the nonce while the verifier is unavailable, and verifies the same envelope later", async () => {
    const ready = await readyForReport(t);
    const envelope = await envelopeFor(ready);
    await withVerifier(t, async () => {
      const parked = await postReport(t, ready, envelope);
      expect(parked.status).toBe(503);
      expect(parked.headers.get("retry-after")).toBe("30");
      expect(((await parked.json()) as { code: string }).code).toBe("verifier_unavailable");
      expect(await row(ready.answer.assignment_id)).toMatchObject({
        state: "verifying",
        nonce_state: "active",
        verification: null,
      });
      // Still parked: another envelope is a conflict, not a second chance.
      const other = await postReport(t, ready, await envelopeFor(ready, { verdict: "escalate" }));
      expect(other.status).toBe(409);
    });
    const later = await postReport(t, ready, envelope);
    expect(later.status).toBe(200);
    expect(((await later.json()) as Receipt).verification.outcome).toBe("allowed");
    expect(await row(ready.answer.assignment_id)).toMatchObject({
      state: "allowed",
      nonce_state: "consumed",
    });
  });

  it("gives one outcome to ten concurrent identical posts (one 202, the rest 200)", async () => {
    const ready = await readyForReport(t);
    const envelope = await envelopeFor(ready);
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => postReport(t, ready, envelope)),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 202]);
    const bodies = await Promise.all(answers.map((answer) => answer.json()));
    expect(new Set(bodies.map((body) => JSON.stringify(body))).size).toBe(1);
    const [events] = await t.sql<{ n: number }[]>`
      select count(*)::int as n from submission_status_events
      where subject_id = ${ready.answer.assignment_id} and event = 'allow'`;
    expect(events!.n).toBe(1);
  });

  it("seals the evidence at rest: the raw row holds no plaintext", async () => {
    const ready = await readyForReport(t);
    const secret = Buffer.from(`{"note":"evidence-plaintext-${sha256Hex("marker")}"}`);
    const answer = await report(ready, {
      evidence: [{ name: "notes.json", mediaType: "application/json", bytes: secret }],
    });
    expect(answer.status).toBe(202);
    const stored = await t.sql<
      { object_ref: string; sealed: Buffer; sha256: string; length: number }[]
    >`
      select object_ref, sealed, sha256, length from review_evidence
      where assignment_id = ${ready.answer.assignment_id}`;
    expect(stored).toHaveLength(1);
    expect(stored[0]!.object_ref).toBe(`${ready.answer.assignment_id}.notes.json`);
    expect(stored[0]!.sha256).toBe(createHash("sha256").update(secret).digest("hex"));
    expect(stored[0]!.length).toBe(secret.length);
    expect(Buffer.from(stored[0]!.sealed).includes("evidence-plaintext")).toBe(false);
  });

  it("refuses a report with a bad token (401), after cancel (410), before model-call-started (409)", async () => {
    const ready = await readyForReport(t);
    const envelope = await envelopeFor(ready);
    expect((await postReport(t, ready, envelope, null)).status).toBe(401);
    expect(
      (await postReport(t, ready, envelope, `${ready.answer.assignment_id}.AAAA`)).status,
    ).toBe(401);
    const cancelled = await reviewCalls(t, ready.miner).cancel(
      ready.submissionId,
      ready.answer.assignment_id,
    );
    expect(cancelled.status).toBe(200);
    const revoked = await postReport(t, ready, envelope);
    expect(revoked.status).toBe(410);
    expect(((await revoked.json()) as { code: string }).code).toBe("capability_revoked");

    // Deployed, but no model call bound yet: a report cannot come first (rule 18).
    const early = await readyForReport(t, { bindModelCall: false });
    const tooEarly = await postReport(t, early, await envelopeFor(early));
    expect(tooEarly.status).toBe(409);
    expect(((await tooEarly.json()) as { code: string }).code).toBe("invalid_transition");
    expect(await row(early.answer.assignment_id)).toMatchObject({ state: "deployed" });
  });

  it("answers 422 to a body that is not an envelope, and stores nothing", async () => {
    const ready = await readyForReport(t);
    const envelope = (await envelopeFor(ready)) as unknown as Record<string, unknown>;
    const response = await postReport(t, ready, {
      ...envelope,
      schema_version: "review-envelope/v2",
    });
    expect(response.status).toBe(422);
    expect(await row(ready.answer.assignment_id)).toMatchObject({
      state: "model_call_started",
      nonce_state: "active",
    });
    // The honest envelope is still accepted afterwards.
    expect((await postReport(t, ready, envelope)).status).toBe(202);
  });
});
