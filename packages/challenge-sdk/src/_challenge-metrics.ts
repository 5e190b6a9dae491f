// The metrics of one challenge instance, served with the process's at GET /internal/v1/metrics
// (challenge token). Labels are bounded: a route is its template (unmatched requests are one
// value), a status its three digits, a submission's outcome one of a few words, a job's state
// one of the queue's five. Nothing a client chooses (paths, hotkeys, ids) becomes a label.
import {
  Counter,
  createMetricsRegistry,
  Gauge,
  type HealthChecks,
  Histogram,
  type Registry,
  type Sql,
  statusLabel,
} from "@platform/core";
import { SDK_VERSION } from "./version.js";

/** The route label of a request no route matched (404). */
export const UNMATCHED_ROUTE = "_unmatched";

/** How a submission ended, from its answer's status. */
export type SubmissionOutcome =
  | "accepted"
  | "rejected"
  | "unauthorized"
  | "duplicate"
  | "rate_limited"
  | "error";

/** The outcome label of a submission answered with `status`. */
export function submissionOutcome(status: number): SubmissionOutcome {
  if (status < 400) return "accepted";
  if (status === 401 || status === 403) return "unauthorized";
  if (status === 409) return "duplicate";
  if (status === 429) return "rate_limited";
  if (status >= 500) return "error";
  return "rejected";
}

/** The metrics of one instance. */
export interface ChallengeMetrics {
  registry: Registry;
  /** Count one answered request (route template or undefined, status, seconds). */
  request(route: string | undefined, status: number, seconds: number): void;
  /** Count one submission (either way in) by the status it was answered with. */
  submission(status: number): void;
}

/** Make an instance's metrics; the job gauge and readiness are read from `sql`/`health` at scrape. */
export function createChallengeMetrics(options: {
  slug: string;
  version: string;
  sql: Sql;
  health: HealthChecks;
}): ChallengeMetrics {
  const registry = createMetricsRegistry();
  const registers = [registry];
  const requests = new Counter({
    name: "challenge_http_requests_total",
    help: "Requests the challenge answered, by route template and status code",
    labelNames: ["route", "code"],
    registers,
  });
  const durations = new Histogram({
    name: "challenge_http_request_duration_seconds",
    help: "Time to answer a request (until its response starts), by route template",
    labelNames: ["route"],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  const submissions = new Counter({
    name: "challenge_submissions_total",
    help: "Submissions received (signed by the miner or bridged by the master), by outcome",
    labelNames: ["outcome"],
    registers,
  });
  const { sql, health } = options;
  new Gauge({
    name: "challenge_jobs",
    help: "Jobs in the challenge's job queue table, by queue and state",
    labelNames: ["queue", "state"],
    registers,
    async collect() {
      this.reset();
      try {
        // defineChallenge migrates the queue's table; a challenge without jobs has it empty.
        const rows = await sql<{ queue: string; status: string; n: number }[]>`
          select queue, status, count(*)::int as n from sdk_jobs group by queue, status`;
        for (const row of rows) this.set({ queue: row.queue, state: row.status }, row.n);
      } catch {
        // The database is away: no series this scrape (challenge_ready says why), not a 500.
      }
    },
  });
  new Gauge({
    name: "challenge_ready",
    help: "1 when GET /readyz answers 200 (every readiness check passes), else 0",
    registers,
    async collect() {
      this.set((await health.run()).status === "ok" ? 1 : 0);
    },
  });
  new Gauge({
    name: "challenge_info",
    help: "The challenge's slug, version and SDK version (always 1)",
    labelNames: ["slug", "version", "sdk_version"],
    registers,
  }).set({ slug: options.slug, version: options.version, sdk_version: SDK_VERSION }, 1);

  return {
    registry,
    request(route, status, seconds) {
      const label = route ?? UNMATCHED_ROUTE;
      requests.inc({ route: label, code: statusLabel(status) });
      durations.observe({ route: label }, seconds);
    },
    submission(status) {
      submissions.inc({ outcome: submissionOutcome(status) });
    },
  };
}
