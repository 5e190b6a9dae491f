/**
 * The review VM's side of /review/v1/assignments/{id}: the six routes the worker calls, each
 * with the assignment token as its bearer, on the SDK's worker client. Answers are returned with
 * their status, never thrown on, because what a status means (give up, record a failure) is the
 * run's decision. The report alone is delivered: the same envelope until a receipt, a refusal
 * or the budget's end.
 */
import { createWorkerClient, type DeliverOptions } from "@platform/challenge-sdk/client";
import type { ReviewEnvelope } from "../review/review-envelope.js";
import type { PlannedModelCall } from "../review/vm-writes.js";

const REQUEST_TIMEOUT_MS = 30_000;

/** A client of one assignment's routes. */
export function reviewVmClient(challengeUrl: string, assignmentId: string, token: string) {
  const assignment = createWorkerClient({
    baseUrl: `${challengeUrl}/review/v1/assignments/${encodeURIComponent(assignmentId)}`,
    auth: { bearer: token },
    timeoutMs: REQUEST_TIMEOUT_MS,
  });

  return {
    assignment: () => assignment.send("GET", ""),
    rules: () => assignment.send("GET", "/rules"),
    /** The artifact's bytes: the worker hashes them itself. */
    artifact: () => assignment.send("GET", "/artifact"),
    modelCallStarted: (record: PlannedModelCall) =>
      assignment.send("POST", "/model-call-started", { json: record }),
    failure: (reasonCode: string, message: string) =>
      assignment.send("POST", "/failure", {
        json: { reason_code: reasonCode, message: message.slice(0, 1024) || reasonCode },
      }),
    /** The envelope, the same bytes on every attempt, until a receipt or a refusal. */
    report: (envelope: ReviewEnvelope, options: DeliverOptions) =>
      assignment.deliver("POST", "/report", JSON.stringify(envelope), options),
  };
}

export type ReviewVmClient = ReturnType<typeof reviewVmClient>;
