// Helpers of the report tests: an assignment taken through the real routes to the point where a
// report is due (prepare, review/deployed, model-call-started), and review envelopes built the
// way the reference review worker builds them, with knobs to tamper with each part.
import { createHash } from "node:crypto";
import { createMinerKey, type MinerKey } from "@platform/challenge-sdk/testing";
import { expect } from "vitest";
import {
  DEV_MEASUREMENT,
  type EventLogEntry,
  loadDevAttestationKey,
  measuredEvent,
  replayEventLog,
  signDevQuote,
} from "../../src/attestation/index.js";
import { canonicalDigest, type JsonValue } from "../../src/crypto/index.js";
import type { ReviewAssignmentCore } from "../../src/review/issue-assignment.js";
import {
  buildReviewEnvelope,
  type EvidenceInput,
  type ReviewCoreRecord,
  type ReviewEnvelope,
  type ReviewVerdict,
} from "../../src/review/review-envelope.js";
import type { AgentEvalTest } from "../agent-eval-kit.js";
import { ok, type ReviewAnswer, reviewCalls, sha256Hex, submitAgent } from "./review-test-kit.js";

/** An assignment in model_call_started, its miner and its token. */
export interface ReadyAssignment {
  miner: MinerKey;
  submissionId: number;
  answer: ReviewAnswer;
  token: string;
  modelCall: { request_id: string; request_sha256: string };
}

/** Bearer requests of the review VM for one assignment. */
export function vmFetch(t: AgentEvalTest, assignmentId: string, token: string | null) {
  const headers: Record<string, string> =
    token === null ? {} : { authorization: `Bearer ${token}` };
  const base = `/review/v1/assignments/${assignmentId}`;
  return {
    get: (path = "") => t.fetch(`${base}${path}`, { headers }),
    post: (path: string, body: unknown) =>
      t.fetch(`${base}${path}`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: typeof body === "string" ? body : JSON.stringify(body),
      }),
  };
}

/**
 * A fresh miner's submission (of `zip`, else a small test agent), prepared, deployed and (unless
 * told not to) its model call bound.
 */
export async function readyForReport(
  t: AgentEvalTest,
  options: { bindModelCall?: boolean; zip?: Buffer } = {},
): Promise<ReadyAssignment> {
  const miner = await createMinerKey();
  const submissionId = await submitAgent(t, miner, options.zip);
  const answer = await ok(await reviewCalls(t, miner).prepare(submissionId));
  const token = answer.secret_delivery!.token;
  const deployed = await t.signedFetch(`/submissions/${submissionId}/review/deployed`, {
    method: "POST",
    miner,
    json: {
      assignment_id: answer.assignment_id,
      vm_id: "vm-test",
      provider_receipt: "receipt",
      image_digest: `sha256:${sha256Hex("image")}`,
      compose_hash: sha256Hex("compose"),
    },
  });
  expect(deployed.status, await deployed.clone().text()).toBe(200);
  const modelCall = { request_id: "req-1", request_sha256: sha256Hex("planned request") };
  if (options.bindModelCall === false) return { miner, submissionId, answer, token, modelCall };
  const started = await vmFetch(t, answer.assignment_id, token).post("/model-call-started", {
    ...modelCall,
    provider: "none",
    model: "none",
    endpoint_host: "none",
  });
  expect(started.status, await started.clone().text()).toBe(200);
  return { miner, submissionId, answer, token, modelCall };
}

/** Knobs to build a wrong envelope; each defaults to what an honest worker does. */
export interface EnvelopeOptions {
  verdict?: ReviewVerdict;
  reportedAt?: string;
  /** Changes the core after it is built and before it is digested (a lying reviewer). */
  editCore?: (core: ReviewCoreRecord) => void;
  evidence?: EvidenceInput[];
  eventLog?: EventLogEntry[];
  /** The RTMRs signed into the quote (default: the event log's replay). */
  quoteRtmrs?: [string, string, string, string];
  /** The MRTD signed into the quote, and the one the envelope claims. */
  quoteMeasurement?: string;
  claimedMeasurement?: string;
  /** Signs over these report_data bytes instead of the binding. */
  quoteReportData?: Buffer;
  /** Another P-256 key's PEM. */
  quoteKeyPem?: string;
  modelCall?: ReviewCoreRecord["model_call"];
  assignmentDigest?: string;
}

const devKey = loadDevAttestationKey();

/** The envelope of `ready`'s assignment, honest unless `options` say otherwise. */
export async function envelopeFor(
  ready: ReadyAssignment,
  options: EnvelopeOptions = {},
): Promise<ReviewEnvelope> {
  const assignment = ready.answer.assignment as unknown as ReviewAssignmentCore;
  const eventLog = options.eventLog ?? [
    measuredEvent(3, "reviewer", "test-reviewer 1"),
    measuredEvent(3, "artifact", assignment.artifact_sha256),
  ];
  const envelope = await buildReviewEnvelope({
    assignment,
    assignmentDigest: options.assignmentDigest ?? ready.answer.assignment_digest,
    verdict: options.verdict ?? "allow",
    summary: "no finding",
    findings: [],
    modelCall: options.modelCall ?? { ...ready.modelCall, response_sha256: null },
    evidence: options.evidence ?? [
      {
        name: "review-findings.json",
        mediaType: "application/json",
        bytes: Buffer.from('{"findings":[]}'),
      },
    ],
    reviewer: { name: "test-reviewer", version: "1" },
    reportedAt: options.reportedAt ?? new Date().toISOString(),
    eventLog,
    vmConfig: { vcpus: 2, memory_mib: 2048, image_digest: `sha256:${sha256Hex("image")}` },
    measurement: options.claimedMeasurement ?? options.quoteMeasurement ?? DEV_MEASUREMENT,
    quote: (reportData) =>
      signDevQuote({
        privateKeyPem: options.quoteKeyPem ?? devKey.privateKeyPem,
        reportData: options.quoteReportData ?? reportData,
        mrtd: options.quoteMeasurement ?? DEV_MEASUREMENT,
        rtmrs: options.quoteRtmrs ?? replayEventLog(eventLog),
      }),
  });
  if (options.editCore) {
    options.editCore(envelope.review_core);
    envelope.review_digest = canonicalDigestOf(envelope.review_core);
  }
  return envelope;
}

// The test recomputes the digest the way the worker does (a lying reviewer signs its lie).
function canonicalDigestOf(core: ReviewCoreRecord): string {
  return canonicalDigest(core as unknown as JsonValue);
}

/** POST the envelope with the assignment's token. */
export function postReport(
  t: AgentEvalTest,
  ready: ReadyAssignment,
  envelope: unknown,
  token: string | null = ready.token,
) {
  return vmFetch(t, ready.answer.assignment_id, token).post("/report", envelope);
}

export const sha384Hex = (text: string) => createHash("sha384").update(text).digest("hex");
