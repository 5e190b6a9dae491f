/**
 * The review VM's side of /review/v1/assignments/{id}: the six routes the worker calls, each
 * with the assignment token as its bearer. Answers are returned with their status, never thrown
 * on, because what a status means (retry, give up, record a failure) is the run's decision.
 */
import type { ReviewEnvelope } from "../review/review-envelope.js";

/** A JSON answer: its status and parsed body (null when it was not JSON). */
export interface JsonAnswer<T = unknown> {
  status: number;
  body: T | null;
  /** Seconds, from a 503's Retry-After. */
  retryAfter: number | null;
}

export interface ModelCallRecord {
  request_id: string;
  provider: string;
  model: string;
  endpoint_host: string;
  request_sha256: string;
}

const REQUEST_TIMEOUT_MS = 30_000;

/** A client of one assignment's routes. */
export function reviewVmClient(challengeUrl: string, assignmentId: string, token: string) {
  const base = `${challengeUrl}/review/v1/assignments/${encodeURIComponent(assignmentId)}`;
  const authorization = `Bearer ${token}`;

  async function call<T>(
    path: string,
    init: { method: string; json?: unknown },
  ): Promise<JsonAnswer<T>> {
    const response = await fetch(`${base}${path}`, {
      method: init.method,
      headers: {
        authorization,
        accept: "application/json",
        ...(init.json === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
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

  return {
    assignment: () => call<unknown>("", { method: "GET" }),
    rules: () => call<unknown>("/rules", { method: "GET" }),
    /** The artifact's bytes (null unless 200) and the sha256 the service says it has. */
    async artifact(): Promise<{
      status: number;
      bytes: Buffer | null;
      claimedSha256: string | null;
    }> {
      const response = await fetch(`${base}/artifact`, {
        headers: { authorization },
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const bytes = Buffer.from(await response.arrayBuffer());
      return {
        status: response.status,
        bytes: response.status === 200 ? bytes : null,
        claimedSha256: response.headers.get("x-artifact-sha256"),
      };
    },
    modelCallStarted: (record: ModelCallRecord) =>
      call<unknown>("/model-call-started", { method: "POST", json: record }),
    failure: (reasonCode: string, message: string) =>
      call<unknown>("/failure", {
        method: "POST",
        json: { reason_code: reasonCode, message: message.slice(0, 1024) || reasonCode },
      }),
    report: (envelope: ReviewEnvelope) =>
      call<unknown>("/report", { method: "POST", json: envelope }),
  };
}

export type ReviewVmClient = ReturnType<typeof reviewVmClient>;
