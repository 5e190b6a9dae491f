import { OutputCapture } from "@platform/challenge-sdk/sandbox";
import {
  failSpan,
  injectTraceHeaders,
  isSlug,
  runInSpan,
  startSpan,
  type TraceSpan,
  tracingEnabled,
} from "@platform/core";
import { Agent, type Dispatcher, request } from "undici";
import { checkTask } from "./_check-task.js";
import { retryAfterSeconds, taskEmitter } from "./_events.js";
import { inTaskTerms } from "./_wire.js";
import type { Task, TaskResult, TaskRunner, TaskRunOptions } from "./task.js";
import {
  TaskAbortedError,
  TaskAuthError,
  TaskError,
  TaskQuotaError,
  TaskRejectedError,
  TaskUnavailableError,
} from "./task-errors.js";

/** Options of {@link brokerTaskRunner}; each falls back to the variable the master sets. */
export interface BrokerTaskRunnerOptions {
  /** The master's admin listener, where the broker is (default: `PLATFORM_MASTER_URL`). */
  masterUrl?: string;
  /** This challenge's broker token (default: `BROKER_TOKEN`). */
  brokerToken?: string;
  /** This challenge's slug (default: `PLATFORM_CHALLENGE_SLUG`). */
  slug?: string;
  /** Where the defaults are read (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** An undici dispatcher to send through (default: a pool owned by this runner). */
  dispatcher?: Dispatcher;
  /** Seconds to wait for the answer beyond the task's timeout: pull, queueing (default 600). */
  answerMarginSeconds?: number;
  /** Largest answer read (default 128 MiB; two 16 MiB outputs JSON-escaped fit). */
  maxResponseBytes?: number;
}

function setting(
  value: string | undefined,
  env: Record<string, string | undefined>,
  name: string,
): string {
  const found = value ?? env[name];
  if (!found) throw new TypeError(`brokerTaskRunner: pass the option or set ${name}`);
  return found;
}

/** Reads a body up to `max` bytes; more is an error, never a partial answer taken as whole. */
async function readCapped(body: Dispatcher.ResponseData["body"], max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > max) {
      body.destroy();
      throw new TaskUnavailableError(
        "invalid_response",
        `The broker's answer exceeds ${max} bytes`,
      );
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks, size).toString("utf8");
}

interface ErrorBody {
  code?: unknown;
  detail?: unknown;
  field?: unknown;
  maximum?: unknown;
  index?: unknown;
}

/** The machine-readable fields of a broker refusal (`field`, `maximum`, `index`), in task terms. */
function refusalDetails(body: ErrorBody): Record<string, string | number> {
  const details: Record<string, string | number> = {};
  if (typeof body.field === "string") details["field"] = inTaskTerms(body.field);
  if (typeof body.maximum === "number") details["maximum"] = body.maximum;
  if (typeof body.index === "number") details["index"] = body.index;
  return details;
}

/**
 * The typed error for a non-200 answer of POST /v1/docker/run. The broker names the wire's
 * fields (`limits.memory_mb`); the error names the task's (`limits.memoryMb`).
 */
function brokerError(
  status: number,
  headers: Dispatcher.ResponseData["headers"],
  text: string,
  base: string,
): TaskError {
  let body: ErrorBody = {};
  try {
    body = JSON.parse(text) as ErrorBody;
  } catch {
    // Not our error body (a proxy's HTML page); the status alone decides.
  }
  const code = typeof body?.code === "string" ? body.code : undefined;
  let detail: string;
  if (typeof body?.detail === "string") detail = inTaskTerms(body.detail);
  else if (Array.isArray(body?.detail)) {
    // FastAPI's 422: [{ loc, msg }]
    detail = (body.detail as { loc?: unknown[]; msg?: unknown }[])
      .slice(0, 5)
      .map((issue) => `${(issue.loc ?? []).slice(1).join(".")}: ${String(issue.msg)}`)
      .join("; ");
    detail = inTaskTerms(detail);
  } else detail = text.slice(0, 500) || "(no body)";
  const after = retryAfterSeconds(headers["retry-after"]);
  switch (status) {
    case 400:
      return new TaskRejectedError(
        code ?? "bad_request",
        `The broker refused the task (${code ?? 400}): ${detail}`,
        { status, details: refusalDetails(body ?? {}) },
      );
    case 401:
      return new TaskAuthError(
        code ?? "unauthorized",
        `The broker refused this challenge's credentials (401): check BROKER_TOKEN and PLATFORM_CHALLENGE_SLUG. ${detail}`,
        401,
      );
    case 403:
      return new TaskAuthError(
        code ?? "forbidden",
        `The broker refused this challenge (403): ${detail}`,
        403,
      );
    case 404:
      return new TaskError(
        "broker_not_found",
        `No broker answers at ${base}/v1/docker/run (404): check PLATFORM_MASTER_URL (the master's admin listener, where the broker is, not its public one)`,
        {
          retryable: false,
          status,
        },
      );
    case 413:
      return new TaskRejectedError(
        "payload_too_large",
        `The task is larger than the broker accepts (413): ${detail}`,
        { status },
      );
    case 422:
      return new TaskRejectedError(
        "invalid_task",
        `The broker found the task invalid (422): ${detail}`,
        { status },
      );
    case 429:
      return new TaskQuotaError(
        `The broker's workload quota is full (429): ${detail}`,
        after ?? 5,
        code ? { code } : {},
      );
  }
  if (status >= 500) {
    return new TaskUnavailableError(
      code ?? "broker_error",
      `The broker failed (${status}): ${detail}`,
      {
        status,
        ...(after ? { retryAfterSeconds: after } : {}),
      },
    );
  }
  // 409 workload_removed (cleanup or reaper took it) and anything unforeseen: worth another try.
  return new TaskError(code ?? `http_${status}`, `The broker answered ${status}: ${detail}`, {
    retryable: status === 409,
    status,
  });
}

interface RunAnswer {
  container_name: string;
  stdout: string;
  stderr: string;
  returncode: number | null;
  timed_out: boolean;
  stdout_truncated?: boolean;
  stderr_truncated?: boolean;
  oom_killed?: boolean;
  duration_ms?: number;
}

function parseAnswer(text: string): RunAnswer {
  let value: Partial<RunAnswer>;
  try {
    value = JSON.parse(text) as Partial<RunAnswer>;
  } catch {
    throw new TaskUnavailableError("invalid_response", "The broker's answer is not JSON");
  }
  const ok =
    typeof value === "object" &&
    value !== null &&
    typeof value.container_name === "string" &&
    typeof value.stdout === "string" &&
    typeof value.stderr === "string" &&
    (value.returncode === null || Number.isInteger(value.returncode)) &&
    typeof value.timed_out === "boolean";
  if (!ok)
    throw new TaskUnavailableError(
      "invalid_response",
      "The broker's answer is not a BrokerRunResponse",
    );
  return value as RunAnswer;
}

/**
 * Runs tasks through the master's container broker (POST {masterUrl}/v1/docker/run with the
 * challenge's broker token), over a pooled undici connection. The task is sent as core's
 * `BrokerRunRequest`: this runner is where the camelCase task becomes the snake_case wire. This is the backend of a
 * challenge the master runs: it inherits the broker's quota, GPU leases and image policy.
 * The broker answers when the container has ended, so `started`, `log` and `finished` events
 * arrive together then. Aborting closes the request and asks the broker to clean the job up.
 * @example const runner = brokerTaskRunner(); // PLATFORM_MASTER_URL, BROKER_TOKEN, PLATFORM_CHALLENGE_SLUG
 */
export function brokerTaskRunner(options: BrokerTaskRunnerOptions = {}): TaskRunner {
  const env = options.env ?? process.env;
  const rawUrl = setting(options.masterUrl, env, "PLATFORM_MASTER_URL");
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new TypeError(`brokerTaskRunner: master URL ${JSON.stringify(rawUrl)} is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TypeError(`brokerTaskRunner: master URL must be http(s), got ${url.protocol}`);
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new TypeError(
      "brokerTaskRunner: the master URL must not carry credentials, a query or a fragment",
    );
  }
  const base = url.toString().replace(/\/+$/, "");
  const token = setting(options.brokerToken, env, "BROKER_TOKEN");
  const slug = setting(options.slug, env, "PLATFORM_CHALLENGE_SLUG");
  if (!isSlug(slug))
    throw new TypeError(`brokerTaskRunner: ${JSON.stringify(slug)} is not a challenge slug`);
  const ownAgent = options.dispatcher
    ? null
    : new Agent({ keepAliveTimeout: 30_000, connections: 64 });
  const dispatcher = options.dispatcher ?? ownAgent!;
  const margin = options.answerMarginSeconds ?? 600;
  const maxResponseBytes = options.maxResponseBytes ?? 128 * 1024 * 1024;
  const headers = {
    authorization: `Bearer ${token}`,
    "x-platform-challenge-slug": slug,
    "content-type": "application/json",
    accept: "application/json",
  };

  /** Best effort: the broker also stops a run whose caller hung up; this removes what is left. */
  async function cleanup(jobId: string): Promise<void> {
    try {
      const response = await request(`${base}/v1/docker/cleanup`, {
        method: "POST",
        dispatcher,
        headers,
        body: JSON.stringify({ job_id: jobId }),
        signal: AbortSignal.timeout(10_000),
      });
      await response.body.dump();
    } catch {
      // The broker's reaper removes anything past its deadline; nothing more to do here.
    }
  }

  async function run(task: Task, runOptions: TaskRunOptions = {}): Promise<TaskResult> {
    const { signal } = runOptions;
    const checked = checkTask(task, { limits: null, fileCaps: null });
    const jobId = checked.request.job_id;
    const emit = taskEmitter(runOptions.onEvent);
    if (signal?.aborted)
      throw new TaskAbortedError(`Task ${jobId} was aborted before it was sent`, signal.reason);
    emit({ type: "queued", jobId, at: new Date() });
    const started = Date.now();
    const aborted = async (cause: unknown): Promise<never> => {
      await cleanup(jobId);
      throw new TaskAbortedError(
        `Task ${jobId} was aborted; the broker was asked to remove its container`,
        cause,
      );
    };
    const waitMs = (checked.request.timeout_seconds + margin) * 1000;
    let status: number;
    let answerHeaders: Dispatcher.ResponseData["headers"];
    let text: string;
    // With tracing on, the broker's run continues this trace (W3C traceparent).
    let span: TraceSpan | undefined;
    let sent: Record<string, string> = headers;
    if (tracingEnabled()) {
      span = startSpan("broker run", {
        kind: "client",
        attributes: {
          "http.request.method": "POST",
          "platform.task.image": checked.request.image,
          "platform.task.job_id": jobId,
        },
      });
      sent = { ...headers };
      runInSpan(span, () => injectTraceHeaders(sent));
    }
    try {
      const response = await request(`${base}/v1/docker/run`, {
        method: "POST",
        dispatcher,
        headers: sent,
        body: JSON.stringify(checked.request),
        ...(signal ? { signal } : {}),
        headersTimeout: waitMs,
        bodyTimeout: waitMs,
      });
      status = response.statusCode;
      answerHeaders = response.headers;
      text = await readCapped(response.body, maxResponseBytes);
      if (span) {
        span.setAttribute("http.response.status_code", status);
        if (status !== 200) failSpan(span, new Error(`broker answered ${status}`));
        span.end();
      }
    } catch (error) {
      if (span) {
        failSpan(span, error);
        span.end();
      }
      if (signal?.aborted) return aborted(signal.reason);
      if (error instanceof TaskError) throw error;
      throw new TaskUnavailableError(
        "broker_unavailable",
        `Cannot reach the broker at ${base}: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
    if (status !== 200) throw brokerError(status, answerHeaders, text, base);
    const answer = parseAnswer(text);
    const containerName = answer.container_name;
    emit({ type: "started", jobId, containerName, at: new Date() });
    const lines = new OutputCapture(Number.MAX_SAFE_INTEGER, (stream, line) =>
      emit({ type: "log", jobId, stream, line, at: new Date() }),
    );
    lines.writeStream("stdout", Buffer.from(answer.stdout));
    lines.writeStream("stderr", Buffer.from(answer.stderr));
    lines.end();
    const result: TaskResult = {
      containerName,
      stdout: answer.stdout,
      stderr: answer.stderr,
      exitCode: answer.returncode,
      timedOut: answer.timed_out,
      oomKilled: answer.oom_killed === true,
      stdoutTruncated: answer.stdout_truncated === true,
      stderrTruncated: answer.stderr_truncated === true,
      durationMs:
        typeof answer.duration_ms === "number" ? answer.duration_ms : Date.now() - started,
    };
    emit({
      type: "finished",
      jobId,
      containerName,
      exitCode: result.exitCode,
      timedOut: result.timedOut,
      oomKilled: result.oomKilled,
      durationMs: result.durationMs,
      at: new Date(),
    });
    return result;
  }

  return {
    kind: "broker",
    run,
    close: async () => {
      await ownAgent?.close();
    },
  };
}
