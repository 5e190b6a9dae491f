/**
 * The eval VM's side of /evaluation/v1/runs/{id} (every call with the run token as its bearer,
 * telemetry calls with the session too) and of the attempt's events route (with the attempt's
 * own token). Answers are returned with their status, never thrown on: what a status means
 * (retry, go on without telemetry, give up) is the run's decision.
 */
import type { TelemetryGrant } from "../eval/telemetry-grant.js";

/** A JSON answer: its status and parsed body (null when it was not JSON). */
export interface JsonAnswer<T = unknown> {
  status: number;
  body: T | null;
  /** Seconds, from a 503's Retry-After. */
  retryAfter: number | null;
}

/** One progress event (never a score: the service refuses score-shaped fields). */
export type ProgressEvent =
  | {
      type: "task.status";
      task_id: string;
      seq: number;
      status: "queued" | "running" | "finished" | "failed";
      trial?: number;
      message?: string;
    }
  | {
      type: "task.progress";
      task_id: string;
      seq: number;
      completed_trials: number;
      total_trials: number;
      message?: string;
    };

/** An attempt's own capability: where its container output goes, and with which token. */
export interface AttemptGrant {
  attempt_id: string;
  token: string;
  events_path: string;
  challenge_slug: string;
}

/** One line of a trial's output as the events route takes it. */
export interface AttemptEventLine {
  stream: "stdout" | "stderr" | "agent";
  message: string;
  at?: string;
}

const REQUEST_TIMEOUT_MS = 30_000;

async function answerOf<T>(response: Response): Promise<JsonAnswer<T>> {
  const text = await response.text();
  let body: T | null = null;
  try {
    body = JSON.parse(text) as T;
  } catch {
    body = null;
  }
  const retryAfter = Number(response.headers.get("retry-after"));
  return {
    status: response.status,
    body,
    retryAfter: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null,
  };
}

/** A client of one run's routes. */
export function evalVmClient(
  challengeUrl: string,
  runId: string,
  token: string,
  /** Where /internal answers (the events route): the proxy never forwards it. */
  internalUrl: string = challengeUrl,
) {
  const base = `${challengeUrl}/evaluation/v1/runs/${encodeURIComponent(runId)}`;
  const authorization = `Bearer ${token}`;

  async function call<T>(
    path: string,
    init: { method: string; json?: unknown; raw?: string; session?: string },
  ): Promise<JsonAnswer<T>> {
    const body = init.raw ?? (init.json === undefined ? undefined : JSON.stringify(init.json));
    const response = await fetch(`${base}${path}`, {
      method: init.method,
      headers: {
        authorization,
        accept: "application/json",
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...(init.session === undefined ? {} : { "x-telemetry-session": init.session }),
      },
      ...(body === undefined ? {} : { body }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    return answerOf<T>(response);
  }

  return {
    run: () => call<unknown>("", { method: "GET" }),
    /** The agent ZIP's bytes (null unless 200). */
    async artifact(): Promise<{ status: number; bytes: Buffer | null }> {
      const response = await fetch(`${base}/artifact`, {
        headers: { authorization },
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const bytes = Buffer.from(await response.arrayBuffer());
      return { status: response.status, bytes: response.status === 200 ? bytes : null };
    },
    env: () => call<{ env?: Record<string, unknown> }>("/env", { method: "GET" }),
    telemetrySession: (grant: TelemetryGrant) =>
      call<{ session_id?: string; expires_at?: string }>("/telemetry-session", {
        method: "POST",
        json: grant,
      }),
    progress: (session: string, event: ProgressEvent) =>
      call<unknown>("/progress", { method: "POST", json: event, session }),
    attempt: (session: string, taskId: string, trial: number) =>
      call<AttemptGrant>("/attempts", {
        method: "POST",
        json: { task_id: taskId, trial },
        session,
      }),
    /** The result, as the exact canonical bytes the worker built. */
    result: (canonicalBody: string) =>
      call<unknown>("/result", { method: "POST", raw: canonicalBody }),
    /** A trial's output lines, NDJSON, with the attempt's token (never the run token). */
    async events(attempt: AttemptGrant, lines: readonly AttemptEventLine[]) {
      if (!attempt.events_path.startsWith("/")) {
        return { status: 0, body: null, retryAfter: null } satisfies JsonAnswer;
      }
      const response = await fetch(`${internalUrl}${attempt.events_path}`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${attempt.token}`,
          "x-core-challenge-slug": attempt.challenge_slug,
          "content-type": "application/x-ndjson",
          accept: "application/json",
        },
        body: lines.map((line) => JSON.stringify(line)).join("\n") + "\n",
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      return answerOf<{ recorded?: number; dropped?: number; truncated?: number }>(response);
    },
  };
}

export type EvalVmClient = ReturnType<typeof evalVmClient>;
