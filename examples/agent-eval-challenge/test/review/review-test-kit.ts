// Helpers of the review-flow tests: a stored submission of a given miner, the three review
// routes as calls, and driving an assignment through the state module into any terminal state
// (the VM's routes, deployed/model-call-started/report, are not part of this flow).
import { createHash } from "node:crypto";
import type { Sql } from "@platform/challenge-sdk";
import type { MinerKey } from "@platform/challenge-sdk/testing";
import { expect } from "vitest";
import { transitionAssignment } from "../../src/state/index.js";
import { type AgentEvalTest, agentZip } from "../agent-eval-kit.js";

export const sha256Hex = (text: string): string =>
  createHash("sha256").update(text, "utf8").digest("hex");

/** A submission of `miner`, stored through POST /submissions; its id. */
export async function submitAgent(
  t: AgentEvalTest,
  miner: MinerKey,
  zip: Buffer = agentZip(),
): Promise<number> {
  const response = await t.signedFetch("/submissions", {
    method: "POST",
    miner,
    json: { name: "agent", artifact_b64: zip.toString("base64") },
  });
  expect(response.status, await response.clone().text()).toBe(201);
  return ((await response.json()) as { id: number }).id;
}

export interface ReviewAnswer {
  assignment_id: string;
  session_id: string;
  state: string;
  assignment: Record<string, unknown> & { attempt: number; nonce: string };
  assignment_digest: string;
  expires_at: string;
  secret_delivery?: { env_key: string; token: string };
}

/** The three miner routes of the flow, signed by `miner`. */
export function reviewCalls(t: AgentEvalTest, miner: MinerKey) {
  const post = (path: string, json?: unknown) =>
    t.signedFetch(path, { method: "POST", miner, ...(json === undefined ? {} : { json }) });
  return {
    prepare: (id: number) => post(`/submissions/${id}/review/prepare`),
    retry: (id: number, body: { expected_assignment_id: string; approval_id?: string }) =>
      post(`/submissions/${id}/review/retry`, body),
    cancel: (id: number, assignmentId: string) =>
      post(`/submissions/${id}/review/cancel`, { assignment_id: assignmentId }),
  };
}

/** The JSON of a 200 answer (fails the test with the body otherwise). */
export async function ok<T = ReviewAnswer>(response: Response): Promise<T> {
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return JSON.parse(text) as T;
}

/** The status and stable code of a refusal. */
export async function refusal(response: Response): Promise<{ status: number; code: string }> {
  const body = (await response.json()) as { code?: string };
  return { status: response.status, code: body.code ?? "(none)" };
}

type Step = Parameters<typeof transitionAssignment>[1];

/** The events that take a queued assignment to `state`, as the review VM's routes would. */
function stepsTo(assignmentId: string, state: string): Step[] {
  const base = { assignmentId, actor: "review_vm" as const };
  const deploy = { ...base, event: "deploy" as const, records: { deployed: { vm: "test" } } };
  const modelCall = {
    ...base,
    event: "start_model_call" as const,
    records: { modelCall: { planned: "test" } },
  };
  const report = {
    ...base,
    event: "receive_report" as const,
    records: { reportEnvelope: { test: true }, receiptSha256: sha256Hex(assignmentId) },
  };
  const verdict = (event: "allow" | "reject" | "escalate") => ({
    ...base,
    event,
    actor: "system" as const,
    records: { verification: { outcome: event } },
  });
  switch (state) {
    case "deployed":
      return [deploy];
    case "model_call_started":
      return [deploy, modelCall];
    case "verifying":
      return [deploy, modelCall, report];
    case "allowed":
      return [deploy, modelCall, report, verdict("allow")];
    case "rejected":
      return [deploy, modelCall, report, verdict("reject")];
    case "escalated":
      return [deploy, modelCall, report, verdict("escalate")];
    case "error":
      return [{ ...base, event: "fail", records: { failure: { reason_code: "test" } } }];
    default:
      throw new Error(`no path to ${state} through the state module`);
  }
}

/** Moves a queued assignment to `state` through the state module (one transaction). */
export async function driveAssignment(sql: Sql, assignmentId: string, state: string) {
  await sql.begin(async (tx) => {
    for (const step of stepsTo(assignmentId, state)) await transitionAssignment(tx, step);
  });
  const [row] = await sql<{ state: string }[]>`
    select state from review_assignments where id = ${assignmentId}`;
  expect(row!.state).toBe(state);
}
