/**
 * The eval VM's side of /evaluation/v1/runs/{id} (every call with the run token as its bearer,
 * telemetry calls with the session too) and of the attempt's events route (with the attempt's
 * own token), on the SDK's worker client. Answers are returned with their status, never thrown
 * on: what a status means (go on without telemetry, give up) is the run's decision. The result
 * alone is delivered: the same bytes until a receipt, a refusal or the budget's end.
 */
import type { Static } from "@platform/challenge-sdk";
import {
  type ClientAnswer,
  createWorkerClient,
  type DeliverOptions,
} from "@platform/challenge-sdk/client";
import type { SealedToKey } from "../crypto/index.js";
import type { ProgressEventRecord } from "../eval/progress.js";
import type { TelemetryGrant } from "../eval/telemetry-grant.js";
import type { AttemptLogLine } from "../live/live-schemas.js";
import type { OpenedAttempt } from "../live/open-attempt.js";

/** One line of a trial's output as the events route takes it. */
export type AttemptEventLine = Static<typeof AttemptLogLine>;

const REQUEST_TIMEOUT_MS = 30_000;

/** A client of one run's routes. */
export function evalVmClient(
  challengeUrl: string,
  runId: string,
  token: string,
  /** Where /internal answers (the events route): the proxy never forwards it. */
  internalUrl: string = challengeUrl,
) {
  const run = createWorkerClient({
    baseUrl: `${challengeUrl}/evaluation/v1/runs/${encodeURIComponent(runId)}`,
    auth: { bearer: token },
    timeoutMs: REQUEST_TIMEOUT_MS,
  });
  const session = (id: string) => ({ headers: { "x-telemetry-session": id } });

  return {
    run: () => run.send("GET", ""),
    artifact: () => run.send("GET", "/artifact"),
    env: () => run.send<{ env?: Record<string, unknown> }>("GET", "/env"),
    /** The run's instance seed, sealed to `request.public_key` (instance-seed-release.ts). */
    instanceSeed: (request: unknown) =>
      run.send<{ sealed?: SealedToKey }>("POST", "/instance-seed", { json: request }),
    telemetrySession: (grant: TelemetryGrant) =>
      run.send<{ session_id?: string; expires_at?: string }>("POST", "/telemetry-session", {
        json: grant,
      }),
    progress: (id: string, event: ProgressEventRecord) =>
      run.send("POST", "/progress", { json: event, ...session(id) }),
    attempt: (id: string, taskId: string, trial: number) =>
      run.send<OpenedAttempt>("POST", "/attempts", {
        json: { task_id: taskId, trial },
        ...session(id),
      }),
    /** The result, as the exact canonical bytes the worker built, until a receipt or refusal. */
    result: (canonicalBody: string, options: DeliverOptions) =>
      run.deliver("POST", "/result", canonicalBody, options),
    /**
     * A trial's output lines, NDJSON, with the attempt's token (never the run token). Sent
     * once: a request sent again stores its lines again.
     */
    async events(
      attempt: OpenedAttempt,
      lines: readonly AttemptEventLine[],
    ): Promise<Pick<ClientAnswer, "status" | "body">> {
      if (!attempt.events_path.startsWith("/")) return { status: 0, body: null };
      const events = createWorkerClient({
        baseUrl: internalUrl,
        auth: { bearer: attempt.token },
        headers: { "x-core-challenge-slug": attempt.challenge_slug },
        timeoutMs: REQUEST_TIMEOUT_MS,
      });
      return events.send("POST", attempt.events_path, {
        body: lines.map((line) => JSON.stringify(line)).join("\n") + "\n",
        contentType: "application/x-ndjson",
      });
    },
  };
}

export type EvalVmClient = ReturnType<typeof evalVmClient>;
