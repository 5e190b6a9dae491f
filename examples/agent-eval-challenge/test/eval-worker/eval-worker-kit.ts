// Helpers of the eval worker's tests: the reference agents (agents/<name>) as files and as the
// ZIP a miner uploads, the reference task set, and a submission of a given agent ZIP taken
// through the real routes to a prepared eval run (review allowed with a development quote, env
// confirmed empty, launched, eval/prepare): eval-kit's preparedRun, with the agent chosen.
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createMinerKey, writeZip } from "@platform/challenge-sdk/testing";
import { expect } from "vitest";
import type { EvalPlan } from "../../src/eval/eval-plan.js";
import { loadTaskSet, type TaskSet } from "../../src/eval/task-set.js";
import type { AgentEvalTest } from "../agent-eval-kit.js";
import type { PreparedRun } from "../eval/eval-kit.js";
import { envelopeFor, postReport, vmFetch } from "../review/report-kit.js";
import { ok, reviewCalls, sha256Hex } from "../review/review-test-kit.js";

export const AGENTS_DIR = fileURLToPath(new URL("../../agents/", import.meta.url));
export const WORKER = fileURLToPath(new URL("../../dist/eval-worker.js", import.meta.url));
export const AGENT_IMAGE = "platform/agent-eval-agent:local";

export type AgentName = "good" | "half" | "escape";

export const loadReferenceTaskSet = (): Promise<TaskSet> =>
  loadTaskSet(new URL("../../tasks/task-set.json", import.meta.url));

/** The files of agents/<name> (or of `files`), as name -> bytes. */
export function agentFiles(name: AgentName): Record<string, Buffer> {
  const directory = `${AGENTS_DIR}${name}`;
  return Object.fromEntries(
    readdirSync(directory).map((file) => [file, readFileSync(`${directory}/${file}`)]),
  );
}

/** The ZIP a miner uploads: the agent's files, unique per call by a comment line in agent.py. */
export function agentArchive(files: Record<string, Buffer | string>): Buffer {
  const unique = `# build ${Math.random().toString(36).slice(2)}\n`;
  return writeZip(
    Object.entries(files).map(([name, data]) => ({
      name,
      data: name === "agent.py" ? Buffer.concat([Buffer.from(unique), Buffer.from(data)]) : data,
    })),
  );
}

/** A fresh miner's submission of `zip`, reviewed (allow), launched and with an issued eval run. */
export async function preparedRunOf(t: AgentEvalTest, zip: Buffer): Promise<PreparedRun> {
  const miner = await createMinerKey();
  const submitted = await t.signedFetch("/submissions", {
    method: "POST",
    miner,
    json: { name: "agent", artifact_b64: zip.toString("base64") },
  });
  expect(submitted.status, await submitted.clone().text()).toBe(201);
  const { id: submissionId } = (await submitted.json()) as { id: number };
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
  const started = await vmFetch(t, answer.assignment_id, token).post("/model-call-started", {
    ...modelCall,
    provider: "none",
    model: "none",
    endpoint_host: "none",
  });
  expect(started.status, await started.clone().text()).toBe(200);
  const ready = { miner, submissionId, answer, token, modelCall };
  expect((await postReport(t, ready, await envelopeFor(ready))).status).toBe(202);
  const base = `/submissions/${submissionId}`;
  await t.signedFetch(`${base}/env/confirm-empty`, { method: "POST", miner });
  expect((await t.signedFetch(`${base}/launch`, { method: "POST", miner })).status).toBe(200);
  const prepared = await t.signedFetch(`${base}/eval/prepare`, { method: "POST", miner });
  expect(prepared.status, await prepared.clone().text()).toBe(200);
  const body = (await prepared.json()) as {
    run_id: string;
    plan: EvalPlan;
    plan_digest: string;
    secret_delivery: { token: string };
  };
  return {
    ...ready,
    runId: body.run_id,
    runToken: body.secret_delivery.token,
    plan: body.plan,
    planDigest: body.plan_digest,
  };
}
