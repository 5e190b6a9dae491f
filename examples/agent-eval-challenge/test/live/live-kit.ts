// Helpers of the live tests: a running run (a prepared run whose telemetry session is open),
// optionally with env values set before launch, its attempts, and the events route's requests.
import { expect } from "vitest";
import type { EvalPlan } from "../../src/eval/eval-plan.js";
import type { AgentEvalTest } from "../agent-eval-kit.js";
import { openTelemetry, type PreparedRun, preparedRun } from "../eval/eval-kit.js";
import { envelopeFor, postReport, readyForReport } from "../review/report-kit.js";

export interface RunningRun extends PreparedRun {
  session: string;
}

/**
 * A running run: like `preparedRun`, but with `env` set (instead of confirmed empty) when given,
 * and its telemetry session opened.
 */
export async function runningRun(
  t: AgentEvalTest,
  options: { env?: Record<string, string> } = {},
): Promise<RunningRun> {
  const run =
    options.env === undefined ? await preparedRun(t) : await preparedRunWithEnv(t, options.env);
  return { ...run, session: await openTelemetry(t, run) };
}

async function preparedRunWithEnv(
  t: AgentEvalTest,
  env: Record<string, string>,
): Promise<PreparedRun> {
  const ready = await readyForReport(t);
  expect((await postReport(t, ready, await envelopeFor(ready))).status).toBe(202);
  const base = `/submissions/${ready.submissionId}`;
  const put = await t.signedFetch(`${base}/env`, {
    method: "PUT",
    miner: ready.miner,
    json: { env },
  });
  expect(put.status, await put.clone().text()).toBe(200);
  expect(
    (await t.signedFetch(`${base}/launch`, { method: "POST", miner: ready.miner })).status,
  ).toBe(200);
  const prepared = await t.signedFetch(`${base}/eval/prepare`, {
    method: "POST",
    miner: ready.miner,
  });
  expect(prepared.status).toBe(200);
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

export interface OpenedAttempt {
  attempt_id: string;
  token: string;
  events_path: string;
  challenge_slug: string;
}

/** POST attempts for `run` (headers overridable for attacks). */
export function postAttempt(
  t: AgentEvalTest,
  run: RunningRun,
  body: unknown,
  options: { session?: string | null; token?: string } = {},
) {
  const session = options.session === undefined ? run.session : options.session;
  return t.fetch(`/evaluation/v1/runs/${run.runId}/attempts`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${options.token ?? run.runToken}`,
      ...(session === null ? {} : { "x-telemetry-session": session }),
    },
    body: JSON.stringify(body),
  });
}

/** An attempt of `run` (first plan task, trial 1 unless told). */
export async function openAttemptOf(
  t: AgentEvalTest,
  run: RunningRun,
  options: { taskId?: string; trial?: number } = {},
): Promise<OpenedAttempt> {
  const response = await postAttempt(t, run, {
    task_id: options.taskId ?? run.plan.task_set.task_ids[0],
    trial: options.trial ?? 1,
  });
  const text = await response.text();
  expect([200, 201], text).toContain(response.status);
  return JSON.parse(text) as OpenedAttempt;
}

/** NDJSON of `lines` (objects are serialised, strings sent as they are). */
export function ndjson(lines: readonly unknown[]): string {
  return `${lines.map((line) => (typeof line === "string" ? line : JSON.stringify(line))).join("\n")}\n`;
}

/** POST an events body as the attempt (token, slug and content type overridable). */
export function postEvents(
  t: AgentEvalTest,
  attempt: OpenedAttempt,
  body: string,
  options: { token?: string | null; slug?: string | null; contentType?: string } = {},
) {
  const token = options.token === undefined ? attempt.token : options.token;
  const slug = options.slug === undefined ? attempt.challenge_slug : options.slug;
  return t.fetch(attempt.events_path, {
    method: "POST",
    headers: {
      "content-type": options.contentType ?? "application/x-ndjson",
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      ...(slug === null ? {} : { "x-core-challenge-slug": slug }),
    },
    body,
  });
}

/** The stored task.log rows of an attempt, oldest first. */
export async function storedLogs(t: AgentEvalTest, attemptId: string) {
  return t.sql<
    {
      submission_id: string;
      run_id: string;
      task_id: string;
      attempt_id: string;
      kind: string;
      payload: { trial: number; stream: string; message: string; truncated?: boolean };
      bytes: number;
    }[]
  >`
    select submission_id, run_id, task_id, attempt_id, kind, payload, bytes
    from eval_task_events where attempt_id = ${attemptId} order by id`;
}

export const errorCode = async (response: Response) =>
  ((await response.json()) as { code: string }).code;
