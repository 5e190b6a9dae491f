/**
 * The live side of an eval run (rules 21, 22): the attempts route (run token + telemetry
 * session), the attempt events route (the attempt's own bearer + the challenge slug), the live
 * execution pool and a submission's SSE feed (both public). None of them reads or writes a
 * score: the result route stays the only path to one.
 */
import {
  type ChallengeRouter,
  HttpError,
  json,
  type SseEvent,
  sseResponse,
} from "@platform/challenge-sdk";
import {
  clientKey,
  type TrustedProxies,
  trustedProxies,
} from "@platform/challenge-sdk/proxy-contract";
import type { AgentEvalState } from "../agent-eval-state.js";
import { runBearer } from "../eval/run-bearer.js";
import { telemetrySessionAuth } from "../eval/telemetry-auth.js";
import { RunIdParams, submissionRoute } from "../route-params.js";
import type { Settings } from "../settings.js";
import { notFound } from "../state/index.js";
import { attemptBearer } from "./attempt-bearer.js";
import {
  EVENT_ERROR_CODES,
  MAX_EVENT_LINES,
  MAX_EVENTS_BODY_BYTES,
  parseEventLines,
  recordAttemptEvents,
} from "./attempt-events.js";

import {
  DEFAULT_FEED_SHARES,
  type FeedRefusal,
  type FeedShares,
  type FeedSlot,
  FeedSlots,
} from "./feed-slots.js";
import {
  DEFAULT_FEED_OPTIONS,
  type FeedOptions,
  liveFeed,
  parseFeedCursor,
  submissionExists,
} from "./live-feed.js";
import { livePool } from "./live-pool.js";
import {
  AttemptEventsReceipt,
  AttemptIdParams,
  AttemptOpenRequest,
  AttemptOpenResponse,
  LiveFeedHeaders,
  LiveFeedQuery,
  LiveFeedStream,
  LivePoolResponse,
  validationRefusals,
} from "./live-schemas.js";
import { ATTEMPT_ERROR_CODES, openAttempt } from "./open-attempt.js";

export interface LiveRouteOptions {
  feed?: Partial<FeedOptions>;
  /** The SSE heartbeat comment while idle (default 15 s). */
  heartbeatMs?: number;
  /** Feeds open at once per instance; more are 429 live_feed_busy (default 256). */
  maxOpenFeeds?: number;
  /** Feeds one client may hold at once; more are 429 live_feed_client_limit (default 8). */
  maxFeedsPerClient?: number;
  /** Feeds of one submission at once; more are 429 live_feed_submission_limit (default 32). */
  maxFeedsPerSubmission?: number;
}

export const LIVE_ERROR_CODES = {
  /** 404: no submission with this id. */
  submissionNotFound: "submission_not_found",
  /** 429: this instance serves as many live feeds as it will; retry shortly. */
  liveFeedBusy: "live_feed_busy",
  /** 429: this client (its address) holds its share of the feeds; close one first. */
  liveFeedClientLimit: "live_feed_client_limit",
  /** 429: this submission has its share of the feeds open; retry shortly. */
  liveFeedSubmissionLimit: "live_feed_submission_limit",
} as const;

const REFUSALS: Record<FeedRefusal, { code: string; detail: string }> = {
  total: { code: LIVE_ERROR_CODES.liveFeedBusy, detail: "Too many live feeds open." },
  client: {
    code: LIVE_ERROR_CODES.liveFeedClientLimit,
    detail: "This client has its share of the live feeds open: close one first.",
  },
  submission: {
    code: LIVE_ERROR_CODES.liveFeedSubmissionLimit,
    detail: "This submission has its share of the live feeds open.",
  },
};

// The feed slots and trusted proxies of each running instance (keyed by its state, so two
// instances share nothing).
const instances = new WeakMap<AgentEvalState, { slots: FeedSlots; proxies: TrustedProxies }>();

/** Register the live routes. */
export function liveRoutes(
  router: ChallengeRouter<Settings, AgentEvalState>,
  options: LiveRouteOptions = {},
): void {
  const feedOptions: FeedOptions = { ...DEFAULT_FEED_OPTIONS, ...options.feed };
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const shares: FeedShares = {
    total: options.maxOpenFeeds ?? DEFAULT_FEED_SHARES.total,
    perClient: options.maxFeedsPerClient ?? DEFAULT_FEED_SHARES.perClient,
    perSubmission: options.maxFeedsPerSubmission ?? DEFAULT_FEED_SHARES.perSubmission,
  };
  const instanceOf = (state: AgentEvalState) => {
    let instance = instances.get(state);
    if (instance === undefined) {
      instance = {
        slots: new FeedSlots(shares),
        proxies: trustedProxies(state.options.trustedProxies),
      };
      instances.set(state, instance);
    }
    return instance;
  };

  router.public({
    method: "POST",
    path: "/evaluation/v1/runs/:eval_run_id/attempts",
    summary: "Open one trial of one plan task: its attempt id and its log-stream bearer",
    description:
      "Needs the run token and X-Telemetry-Session, and a running run. One attempt per " +
      "(run, task, trial): 201 the first time, 200 with the same attempt and token after. " +
      "The token opens only that attempt's events route (with x-core-challenge-slug).",
    tags: ["eval-vm", "live"],
    params: RunIdParams,
    bearer: runBearer,
    auth: telemetrySessionAuth,
    body: AttemptOpenRequest,
    bodyLimit: 4096,
    responses: {
      200: { description: "The trial's attempt, opened before", schema: AttemptOpenResponse },
      201: { description: "The trial's attempt, opened now", schema: AttemptOpenResponse },
      401: { description: "invalid_token, invalid_telemetry_session" },
      409: {
        description: `${ATTEMPT_ERROR_CODES.unknownTask}, ${ATTEMPT_ERROR_CODES.unknownTrial}, ${ATTEMPT_ERROR_CODES.runNotRunning}`,
      },
      410: { description: "capability_revoked: the run was cancelled, expired or failed" },
    },
    handler: async ({ sql, state, slug, bearer: run, body }) => {
      const opened = await openAttempt(sql, {
        runId: run.id,
        taskId: body.task_id,
        trial: body.trial,
        secretKey: state.secretKey,
        slug,
      });
      return json(opened.attempt, { status: opened.status });
    },
  });

  router.internal({
    method: "POST",
    path: "/internal/v1/evaluations/:attempt_id/events",
    summary: "An attempt's log lines (NDJSON): attributed from the attempt, redacted (rule 21)",
    description:
      "Authorization: Bearer <the attempt's token> plus x-core-challenge-slug; the challenge " +
      `token opens nothing here. One JSON object a line, {stream?, message, at?}, at most ` +
      `${MAX_EVENT_LINES} lines and 4 MiB. Lines are attributed to the attempt's submission, ` +
      "run, task and trial whatever the body says, redacted (API keys, bearer tokens, run and " +
      "attempt tokens, the miner's env values) before storage, all or none (422 " +
      `${EVENT_ERROR_CODES.invalidEventLine} with the line number). Caps: 64 KiB an event ` +
      "(cut, counted as truncated), 10 MiB a task, 50 MiB a submission (dropped, counted). " +
      "Never changes a score.",
    tags: ["eval-vm", "live"],
    params: AttemptIdParams,
    body: "raw",
    contentTypes: ["application/x-ndjson"],
    bodyLimit: MAX_EVENTS_BODY_BYTES,
    bearer: attemptBearer,
    responses: {
      202: { description: "Counts of the lines", schema: AttemptEventsReceipt },
      401: { description: "invalid_internal_token: not this attempt's token" },
      403: { description: "challenge_slug_mismatch" },
      410: {
        description: `${EVENT_ERROR_CODES.capabilityRevoked}: the attempt's run has ended`,
      },
      413: { description: `payload_too_large (4 MiB), ${EVENT_ERROR_CODES.tooManyLines}` },
      415: { description: "unsupported_media_type: send application/x-ndjson" },
      422: validationRefusals(
        `${EVENT_ERROR_CODES.invalidEventLine} {detail, code, line}: a bad line, nothing stored; ` +
          EVENT_ERROR_CODES.invalidEncoding,
      ),
    },
    handler: async ({ sql, state, bearer: attempt, body }) => {
      const lines = parseEventLines(body);
      const receipt = await recordAttemptEvents(sql, {
        attemptId: attempt.id,
        lines,
        secretKey: state.secretKey,
      });
      return json(receipt, { status: 202 });
    },
  });

  router.public({
    method: "GET",
    path: "/v1/execution-pool/live",
    summary: "The eval units in flight, each with its latest task-log event (rule 22)",
    description:
      "Tasks of running runs whose latest task.status is not finished or failed, keyed by " +
      "submission id; `{}` when none. Score- and weight-shaped keys are stripped.",
    tags: ["live"],
    responses: {
      200: { description: "The pool", schema: LivePoolResponse },
      // The spec declares a 422 on every route; this one takes no input, so never answers it.
      422: validationRefusals("never: the route takes no input"),
    },
    handler: async ({ sql }) => json(await livePool(sql)),
  });

  router.public({
    method: "GET",
    path: "/v1/submissions/:submission_id/live",
    summary: "A submission's live feed (server-sent events): status changes and task logs",
    description:
      "Events `status` (public status changes) and `task.status`, `task.progress`, `task.log` " +
      "(as stored, redacted, no scores), in time order. Each id is `<status seq>.<task event " +
      "id>`: reconnect with Last-Event-ID (or ?last_event_id=) to resume exactly after it. " +
      "A heartbeat comment every 15 s; the stream ends once the submission rests in a final " +
      "public status (rejected, suspicious, error, cancelled, expired, valid, failed, invalid). " +
      `An instance serves ${shares.total} feeds at once, at most ${shares.perClient} to one ` +
      `client (its address: the socket's, or X-Forwarded-For's as a trusted proxy reports ` +
      `it) and ${shares.perSubmission} of one submission.`,
    ...submissionRoute("live"),
    query: LiveFeedQuery,
    headers: LiveFeedHeaders,
    responses: {
      200: { description: "The feed", schema: LiveFeedStream, contentType: "text/event-stream" },
      404: { description: LIVE_ERROR_CODES.submissionNotFound },
      429: {
        description: `${LIVE_ERROR_CODES.liveFeedBusy}, ${LIVE_ERROR_CODES.liveFeedClientLimit}, ${LIVE_ERROR_CODES.liveFeedSubmissionLimit} (Retry-After)`,
      },
    },
    handler: async ({ sql, state, params, request, env }) => {
      const submissionId = params.submission_id;
      if (!(await submissionExists(sql, submissionId))) {
        throw notFound(LIVE_ERROR_CODES.submissionNotFound, `Submission ${submissionId}`);
      }
      const { slots, proxies } = instanceOf(state);
      const client = clientKey(request.headers, env.remoteAddress, proxies);
      const slot = slots.take(client, submissionId);
      if ("refused" in slot) {
        const { code, detail } = REFUSALS[slot.refused];
        throw new HttpError(429, code, detail, { headers: { "retry-after": "5" } });
      }
      const held: FeedSlot = slot;
      async function* counted(lastEventId: string | null, signal: AbortSignal) {
        try {
          yield* liveFeed(sql, {
            submissionId,
            cursor: parseFeedCursor(lastEventId),
            signal,
            options: feedOptions,
          }) as AsyncGenerator<SseEvent>;
        } finally {
          held.release();
        }
      }
      return sseResponse(request, ({ lastEventId, signal }) => counted(lastEventId, signal), {
        heartbeatMs,
      });
    },
  });
}
