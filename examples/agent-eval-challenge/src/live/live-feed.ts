/**
 * GET /v1/submissions/{id}/live: a submission's public live feed as server-sent events. Two
 * streams merged in time order: its public status changes (the submission machine's events,
 * under their public labels) and its task-log events (task.status, task.progress, task.log as
 * stored, score-shaped keys stripped). The feed polls the database, and closes once the
 * submission rests in a state where nothing is under way (see TERMINAL_PUBLIC_STATUSES).
 *
 * Resuming: every event's id is the compound cursor `<status seq>.<task event id>`, the position
 * in both streams after that event; a client reconnecting with Last-Event-ID gets exactly what
 * follows, no repeat and no gap. Gap-free relies on both streams committing in id order per
 * submission: status seqs come from the submission row's counter, and every writer of task
 * events holds its run's row lock (one active run a submission) until it commits.
 */
import { setTimeout as delay } from "node:timers/promises";
import type { Sql, SseEvent, Static } from "@platform/challenge-sdk";
import {
  isSubmissionState,
  type PublicSubmissionStatus,
  publicSubmissionStatus,
} from "../state/index.js";
import { type LiveEvent, liveEvent } from "./live-pool.js";
import type { LiveStatusEvent } from "./live-schemas.js";

/**
 * Public statuses after which the feed closes: outcomes that wait for a new decision (a retry,
 * an approval, a revalidate) rather than work in progress. A client that reconnects later with
 * its Last-Event-ID picks up from there.
 */
export const TERMINAL_PUBLIC_STATUSES: readonly PublicSubmissionStatus[] = [
  "rejected",
  "suspicious",
  "error",
  "cancelled",
  "expired",
  "valid",
  "failed",
  "invalid",
];

/** `<status seq>.<task event id>`: what Last-Event-ID carries. */
export const FEED_CURSOR_PATTERN = "^[0-9]{1,10}\\.[0-9]{1,19}$";

export interface FeedCursor {
  statusSeq: number;
  eventId: bigint;
}

export interface FeedOptions {
  /** Between two polls of the database. */
  pollMs: number;
  /** A feed closes after this long (the client resumes with Last-Event-ID). */
  maxDurationMs: number;
  /** Rows a stream reads per poll. */
  batch?: number;
}

export const DEFAULT_FEED_OPTIONS: FeedOptions = {
  pollMs: 500,
  maxDurationMs: 30 * 60 * 1000,
};

/** The cursor a Last-Event-ID names; the start of both streams without one (or a bad one). */
export function parseFeedCursor(id: string | null): FeedCursor {
  const match = id === null ? null : new RegExp(FEED_CURSOR_PATTERN).exec(id.trim());
  if (match === null) return { statusSeq: 0, eventId: 0n };
  const [seq, eventId] = id!.trim().split(".") as [string, string];
  return { statusSeq: Number(seq), eventId: BigInt(eventId) };
}

export function formatFeedCursor(cursor: FeedCursor): string {
  return `${cursor.statusSeq}.${cursor.eventId}`;
}

/** A status change as the feed shows it. */
export type StatusEventData = Static<typeof LiveStatusEvent>;

/** A task-log event as the feed shows it. */
export interface TaskEventData extends LiveEvent {
  run_id: string;
  task_id: string;
}

interface StatusRow {
  seq: number;
  from_state: string | null;
  to_state: string;
  at: Date;
}

interface TaskEventRow {
  id: string | bigint;
  run_id: string;
  task_id: string;
  kind: string;
  payload: Record<string, unknown>;
  created_at: Date;
}

type Item = { type: "status"; row: StatusRow } | { type: "task"; row: TaskEventRow };

/** Whether submission `submissionId` exists. */
export async function submissionExists(sql: Sql, submissionId: number): Promise<boolean> {
  const [row] = await sql`select 1 from submissions where id = ${submissionId}`;
  return row !== undefined;
}

/**
 * The feed of one submission from `cursor` on: every event not yet seen, then a poll every
 * `pollMs`, until the submission is in a terminal public status (after its last events), the
 * feed's time is up, or `signal` aborts (the client left).
 */
export async function* liveFeed(
  sql: Sql,
  input: { submissionId: number; cursor: FeedCursor; signal: AbortSignal; options: FeedOptions },
): AsyncGenerator<SseEvent> {
  const { submissionId, signal, options } = input;
  const batch = options.batch ?? 200;
  const cursor = { ...input.cursor };
  const deadline = Date.now() + options.maxDurationMs;
  while (!signal.aborted) {
    // The state first: events read after it include everything up to it.
    const [submission] = await sql<{ state: string }[]>`
      select state from submissions where id = ${submissionId}`;
    if (!submission) return;
    const statuses = await sql<StatusRow[]>`
      select seq, from_state, to_state, at from submission_status_events
      where submission_id = ${submissionId} and machine = 'submission'
        and seq > ${cursor.statusSeq}
      order by seq limit ${batch}`;
    const events = await sql<TaskEventRow[]>`
      select id, run_id, task_id, kind, payload, created_at from eval_task_events
      where submission_id = ${submissionId} and id > ${cursor.eventId.toString()}
      order by id limit ${batch}`;
    for (const item of merged(statuses, events, batch)) {
      if (signal.aborted) return;
      if (item.type === "status") {
        cursor.statusSeq = item.row.seq;
        yield {
          id: formatFeedCursor(cursor),
          event: "status",
          data: statusData(item.row) satisfies StatusEventData,
        };
      } else {
        cursor.eventId = BigInt(item.row.id);
        yield {
          id: formatFeedCursor(cursor),
          event: item.row.kind,
          data: {
            ...liveEvent(item.row),
            run_id: item.row.run_id,
            task_id: item.row.task_id,
          } satisfies TaskEventData,
        };
      }
    }
    // A full batch: more is waiting, read on at once.
    if (statuses.length === batch || events.length === batch) continue;
    if (isTerminal(submission.state) || Date.now() >= deadline) return;
    // An abort (the client left) ends the wait early; the loop then sees it.
    await delay(options.pollMs, undefined, { signal }).catch(() => undefined);
  }
}

const timeOf = (at: Date) => new Date(at).getTime();

/**
 * Both batches merged by time (a status change first on a tie), each stream kept in its own
 * order (seq, id), so the cursor only moves forward. When one batch is full and used up, the
 * other stream stops there: its next items may come after rows of the full stream not yet read.
 */
function merged(statuses: StatusRow[], events: TaskEventRow[], batch: number): Item[] {
  const items: Item[] = [];
  let i = 0;
  let j = 0;
  while (i < statuses.length || j < events.length) {
    const status = statuses[i];
    const event = events[j];
    if (status === undefined && statuses.length === batch) break;
    if (event === undefined && events.length === batch) break;
    if (
      status !== undefined &&
      (event === undefined || timeOf(status.at) <= timeOf(event.created_at))
    ) {
      items.push({ type: "status", row: status });
      i++;
    } else {
      items.push({ type: "task", row: event! });
      j++;
    }
  }
  return items;
}

function statusData(row: StatusRow): StatusEventData {
  return {
    seq: row.seq,
    status: publicLabel(row.to_state),
    previous_status: row.from_state === null ? null : publicLabel(row.from_state),
    at: new Date(row.at).toISOString(),
  };
}

function publicLabel(state: string): PublicSubmissionStatus {
  // Every submission-machine state is a SubmissionState (the migration checks the set).
  return isSubmissionState(state) ? publicSubmissionStatus(state) : "error";
}

function isTerminal(state: string): boolean {
  return TERMINAL_PUBLIC_STATUSES.includes(publicLabel(state));
}
