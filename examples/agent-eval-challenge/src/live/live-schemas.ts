/**
 * The records of the attempts route, the events route and the two live views, as TypeBox
 * schemas: the routes validate with them and /openapi.json shows them under these titles.
 */
import { type TSchema, Type } from "@platform/challenge-sdk";
import { Literals, MintedId, NamedRecord, TaskId, Timestamp } from "../schema-primitives.js";
import { PublicStatus } from "../submissions/submission-schemas.js";
import { LOG_STREAMS } from "./attempt-events.js";
import { FEED_CURSOR_PATTERN } from "./live-feed.js";

export const AttemptIdParams = Type.Object({ attempt_id: MintedId });

/** POST /evaluation/v1/runs/{id}/attempts: one trial of one plan task. */
export const AttemptOpenRequest = NamedRecord("AttemptOpenRequest", {
  task_id: TaskId,
  // The plan's k is at most 16; beyond the plan's own k is 409 unknown_trial.
  trial: Type.Integer({ minimum: 1, maximum: 16 }),
});

export const AttemptOpenResponse = NamedRecord("AttemptOpenResponse", {
  attempt_id: MintedId,
  token: Type.String({ description: "The attempt's bearer for its events route" }),
  events_path: Type.String({ description: "/internal/v1/evaluations/{attempt_id}/events" }),
  challenge_slug: Type.String({ description: "What x-core-challenge-slug must carry" }),
});

/** One NDJSON line of the events route (documentation: the route reads the raw bytes). */
export const AttemptLogLine = Type.Object(
  {
    stream: Type.Optional(Literals(LOG_STREAMS)),
    message: Type.String(),
    at: Type.Optional(Timestamp),
  },
  { title: "AttemptLogLine" },
);

/** 202 of the events route: counts only. */
export const AttemptEventsReceipt = NamedRecord("AttemptEventsReceipt", {
  recorded: Type.Integer({ minimum: 0 }),
  dropped: Type.Integer({ minimum: 0, description: "Lines past the task or submission cap" }),
  truncated: Type.Integer({ minimum: 0, description: "Lines cut to the 64 KiB event cap" }),
});

/** A stored event as the public views show it: kind, time, then its payload (no scores). */
export const LiveEvent = Type.Object(
  {
    kind: Literals(["task.status", "task.progress", "task.log"]),
    at: Timestamp,
  },
  { additionalProperties: true, title: "LiveEvent" },
);

export const LivePoolUnit = NamedRecord("LivePoolUnit", {
  run_id: MintedId,
  task_id: TaskId,
  latest_event: LiveEvent,
});

/** GET /v1/execution-pool/live: in-flight units by submission id; `{}` when none. */
export const LivePoolResponse = Type.Record(
  Type.String({ pattern: "^[0-9]+$" }),
  Type.Array(LivePoolUnit),
  { title: "LivePoolResponse" },
);

/** The `status` events of the live feed. */
export const LiveStatusEvent = NamedRecord("LiveStatusEvent", {
  seq: Type.Integer({ minimum: 1 }),
  status: PublicStatus,
  previous_status: Type.Union([PublicStatus, Type.Null()]),
  at: Timestamp,
});

const FeedCursor = Type.String({
  pattern: FEED_CURSOR_PATTERN,
  description: "The id of the last event seen: `<status seq>.<task event id>`",
});

/** The feed's body: server-sent events (`status`, `task.status`, `task.progress`, `task.log`). */
export const LiveFeedStream = Type.String({
  description:
    "text/event-stream: `id: <status seq>.<task event id>`, `event: <kind>`, `data: <JSON>`; " +
    "a `: ping` comment every 15 s while idle",
  title: "LiveFeedStream",
});

export const LiveFeedQuery = Type.Object({ last_event_id: Type.Optional(FeedCursor) });
export const LiveFeedHeaders = Type.Object({ "last-event-id": Type.Optional(FeedCursor) });

/**
 * A 422 that also names the route's own refusals: the body of a validation failure stays the
 * spec's HTTPValidationError (the component every route's 422 refers to).
 */
export function validationRefusals(codes: string): { description: string; schema: TSchema } {
  return {
    description: `Validation Error (HTTPValidationError); ${codes}`,
    schema: Type.Unsafe({ $ref: "#/components/schemas/HTTPValidationError" }),
  };
}
