/**
 * POST /internal/v1/evaluations/{attempt_id}/events (rule 21): an attempt's log lines, NDJSON,
 * one `{stream?, message, at?}` object a line. Every line is attributed from the attempt's own
 * row (submission, run, task, trial), never from the body: other fields are ignored, so a body
 * naming another task or submission changes nothing. Each message is redacted whole (the shapes
 * of redaction.ts, and the miner's env values in every spelling of env-spellings.ts, also where
 * the line starts or ends with a piece of one) before anything is written, and only then cut to
 * the event cap, so the cut leaves no piece of a value. All lines or none: a bad line is 422
 * with its number and nothing is stored.
 *
 * Caps (what is stored, after redaction and truncation): 64 KiB an event (the message is cut,
 * `truncated: true`), 10 MiB a task of a run across its trials, 50 MiB a submission; a line past
 * a cap is dropped and counted. Lines are taken while the run is running or verifying; a run
 * that ended revokes the attempt (410). Nothing here reads or writes a score.
 */
import { HttpError, type Sql, type Static } from "@platform/challenge-sdk";
import { openMinerEnv } from "../env/miner-env.js";
import { reviewTransaction } from "../review/index.js";
import type { AttemptEventsReceipt } from "./live-schemas.js";
import { envSpellings, redactSecrets } from "./redaction.js";

/** The body cap (the route's bodyLimit: 413 payload_too_large past it). */
export const MAX_EVENTS_BODY_BYTES = 4 * 1024 * 1024;
/** Lines a request (blank lines not counted). */
export const MAX_EVENT_LINES = 512;

/** Stored bytes: what the caps count. */
export const EVENT_CAPS = {
  /** One event's stored payload (its message is cut to fit). */
  eventBytes: 64 * 1024,
  /** One task of one run, across its trials. */
  taskBytes: 10 * 1024 * 1024,
  /** One submission, across its runs. */
  submissionBytes: 50 * 1024 * 1024,
};
type EventCaps = typeof EVENT_CAPS;

export const EVENT_ERROR_CODES = {
  /** 413: more than 512 lines in one request. */
  tooManyLines: "too_many_lines",
  /** 422: a line that is not one JSON object `{stream?, message, at?}` (the body names it). */
  invalidEventLine: "invalid_event_line",
  /** 422: the body is not UTF-8. */
  invalidEncoding: "invalid_encoding",
  /** 401: the attempt no longer exists. */
  invalidToken: "invalid_token",
  /** 410: the attempt's run ended (accepted, rejected, cancelled, expired, failed). */
  capabilityRevoked: "capability_revoked",
} as const;

export const LOG_STREAMS = ["stdout", "stderr", "agent"] as const;
export type LogStream = (typeof LOG_STREAMS)[number];

/** One parsed line, before redaction. */
export interface EventLine {
  stream: LogStream;
  message: string;
  /** The worker's own timestamp, if it sent one (stored as `reported_at`). */
  at: string | null;
}

/** The stored payload of a task.log event. */
export interface LogPayload {
  trial: number;
  stream: LogStream;
  message: string;
  reported_at?: string;
  truncated?: true;
}

// RFC 3339 date-time: fixed-width fields, one bounded fraction. Nothing to backtrack over.
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;

/** The lines of an NDJSON body, or a 413 / 422 naming the first bad one. */
export function parseEventLines(bytes: Uint8Array): EventLine[] {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new HttpError(422, EVENT_ERROR_CODES.invalidEncoding, "The body is not UTF-8.");
  }
  const lines: EventLine[] = [];
  const physical = text.split("\n");
  for (let index = 0; index < physical.length; index++) {
    const line = physical[index]!;
    if (line.trim() === "") continue;
    if (lines.length === MAX_EVENT_LINES) {
      throw new HttpError(
        413,
        EVENT_ERROR_CODES.tooManyLines,
        `At most ${MAX_EVENT_LINES} lines a request.`,
        { extra: { max_lines: MAX_EVENT_LINES } },
      );
    }
    lines.push(parseLine(line, index + 1));
  }
  return lines;
}

function parseLine(line: string, number: number): EventLine {
  const refuse = (why: string) =>
    new HttpError(422, EVENT_ERROR_CODES.invalidEventLine, `Line ${number}: ${why}`, {
      extra: { line: number },
    });
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw refuse("not JSON.");
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw refuse("not a JSON object.");
  }
  const { stream, message, at } = value as Record<string, unknown>;
  if (typeof message !== "string") throw refuse("message must be a string.");
  if (stream !== undefined && !(LOG_STREAMS as readonly unknown[]).includes(stream)) {
    throw refuse(`stream must be one of ${LOG_STREAMS.join(", ")}.`);
  }
  if (at !== undefined && !(typeof at === "string" && at.length <= 40 && TIMESTAMP.test(at))) {
    throw refuse("at must be an RFC 3339 timestamp.");
  }
  return {
    stream: (stream as LogStream | undefined) ?? "stdout",
    message,
    at: (at as string | undefined) ?? null,
  };
}

/** What the events route answers (202): counts only. */
export type EventsReceipt = Static<typeof AttemptEventsReceipt>;

interface AttemptRow {
  id: string;
  run_id: string;
  submission_id: string;
  task_id: string;
  trial: number;
  run_state: string;
}

/** States in which a run's attempts may still log (the worker flushes after its result). */
const LOGGING_RUN_STATES: readonly string[] = ["running", "verifying"];

/** 410 once an attempt's run no longer takes lines (it ended). */
export function judgeAttemptRun(runId: string, runState: string): void {
  if (!LOGGING_RUN_STATES.includes(runState)) {
    throw new HttpError(
      410,
      EVENT_ERROR_CODES.capabilityRevoked,
      `Eval run ${runId} is ${runState}: its attempts log no more.`,
      { extra: { state: runState } },
    );
  }
}

/**
 * Record `lines` for attempt `attemptId` (the route's `attemptBearer` opened it); its run is
 * locked and judged again (410), since it may have ended since the bearer was checked.
 */
export async function recordAttemptEvents(
  sql: Sql,
  input: { attemptId: string; lines: readonly EventLine[]; secretKey: Buffer; caps?: EventCaps },
): Promise<EventsReceipt> {
  const caps = input.caps ?? EVENT_CAPS;
  return reviewTransaction(sql, undefined, async (tx) => {
    const [attempt] = await tx<AttemptRow[]>`
      select a.id, a.run_id, a.submission_id, a.task_id, a.trial, r.state as run_state
      from eval_attempts a join eval_runs r on r.id = a.run_id
      where a.id = ${input.attemptId}
      for update of r, a`;
    if (!attempt) {
      throw new HttpError(401, EVENT_ERROR_CODES.invalidToken, "Unknown attempt.", {
        headers: { "www-authenticate": "Bearer" },
      });
    }
    // The run row is locked: every writer of a run's events (this route, progress) takes that
    // lock, so event ids are committed in order per submission (the live feed resumes on them)
    // and the byte counts below cannot be raced past a cap.
    judgeAttemptRun(attempt.run_id, attempt.run_state);
    const env = await openMinerEnv(tx, attempt.submission_id, input.secretKey);
    const secrets = { exact: envSpellings(Object.values(env ?? {})) };
    const [used] = await tx<{ task_bytes: string; submission_bytes: string }[]>`
      select
        coalesce(sum(log_bytes) filter (
          where run_id = ${attempt.run_id} and task_id = ${attempt.task_id}), 0) as task_bytes,
        coalesce(sum(log_bytes), 0) as submission_bytes
      from eval_attempts where submission_id = ${attempt.submission_id}`;
    let taskBytes = Number(used!.task_bytes);
    let submissionBytes = Number(used!.submission_bytes);

    const stored: { payload: LogPayload; bytes: number }[] = [];
    let dropped = 0;
    let truncated = 0;
    for (const line of input.lines) {
      const event = storedEvent(line, attempt.trial, secrets, caps.eventBytes);
      if (
        taskBytes + event.bytes > caps.taskBytes ||
        submissionBytes + event.bytes > caps.submissionBytes
      ) {
        dropped++;
        continue;
      }
      taskBytes += event.bytes;
      submissionBytes += event.bytes;
      if (event.payload.truncated) truncated++;
      stored.push(event);
    }
    if (stored.length > 0) {
      // One statement, in line order (ordinality), attributed from the attempt's row only.
      await tx`
        insert into eval_task_events
          (submission_id, run_id, task_id, attempt_id, kind, payload, bytes)
        select ${attempt.submission_id}, ${attempt.run_id}, ${attempt.task_id}, ${attempt.id},
          'task.log', e.value -> 'payload', (e.value ->> 'bytes')::integer
        from jsonb_array_elements(${tx.json(stored as never)}::jsonb) with ordinality as e(value, n)
        order by e.n`;
      const added = stored.reduce((sum, event) => sum + event.bytes, 0);
      await tx`update eval_attempts set log_bytes = log_bytes + ${added} where id = ${attempt.id}`;
    }
    return { recorded: stored.length, dropped, truncated };
  });
}

/** One line as it is stored: redacted, then cut to `maxBytes` of JSON payload. */
export function storedEvent(
  line: EventLine,
  trial: number,
  secrets: { exact: readonly string[] },
  maxBytes: number,
): { payload: LogPayload; bytes: number } {
  const message = redactSecrets(storable(line.message), secrets);
  const payload: LogPayload = {
    trial,
    stream: line.stream,
    message,
    ...(line.at === null ? {} : { reported_at: line.at }),
  };
  let bytes = jsonBytes(payload);
  if (bytes <= maxBytes) return { payload, bytes };
  const cut: LogPayload = { ...payload, message: "", truncated: true };
  const room = maxBytes - jsonBytes(cut);
  cut.message = longestPrefixWithin(message, room);
  bytes = jsonBytes(cut);
  return { payload: cut, bytes };
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value), "utf8");
}

/**
 * The longest prefix of `text` whose JSON string body takes at most `room` bytes (escapes
 * counted), never ending inside a surrogate pair. A binary search: every character costs at
 * least one byte, so the prefix is at most `room` characters long.
 */
function longestPrefixWithin(text: string, room: number): string {
  const bodyBytes = (s: string) => jsonBytes(s) - 2;
  let low = 0;
  let high = Math.min(text.length, Math.max(0, room));
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (bodyBytes(text.slice(0, middle)) <= room) low = middle;
    else high = middle - 1;
  }
  let end = low;
  const last = text.charCodeAt(end - 1);
  if (end > 0 && last >= 0xd800 && last <= 0xdbff) end--;
  return text.slice(0, end);
}

/**
 * Text PostgreSQL's jsonb can hold: no NUL (jsonb refuses \u0000) and no lone surrogate
 * (refused as an invalid escape); both become U+FFFD.
 */
function storable(text: string): string {
  return text.toWellFormed().replaceAll("\u0000", "\uFFFD");
}
