// Helpers of the live tests: a running run (a prepared run whose telemetry session is open),
// optionally with env values set before launch, its attempts, and the events route's requests.
import { expect } from "vitest";
import type { AgentEvalTest } from "../agent-eval-kit.js";
import { openTelemetry, type PreparedRun, preparedRun } from "../eval/eval-kit.js";

export interface RunningRun extends PreparedRun {
  session: string;
}

/** A running run: `preparedRun` (with `env` set when given) and its telemetry session opened. */
export async function runningRun(
  t: AgentEvalTest,
  options: { env?: Record<string, string> } = {},
): Promise<RunningRun> {
  const run = await preparedRun(t, options);
  return { ...run, session: await openTelemetry(t, run) };
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
