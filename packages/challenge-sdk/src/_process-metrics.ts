// The metrics a challenge PROCESS has once, whatever instances it runs: Node's own (CPU, memory,
// event loop lag, GC) and the job queue's durations, recorded by workers that know no instance.
// Kept on globalThis: the SDK's subpath entries are built separately (dist/index.js and
// dist/jobs/index.js each carry their own copy of this module), and one process must hold one.
import { createMetricsRegistry, Histogram, type Registry } from "@platform/core";

/** The process-wide registry and the metrics recorded into it. */
export interface ProcessMetrics {
  registry: Registry;
  /** `challenge_job_duration_seconds{kind,outcome}`: one handled job, claim to outcome. */
  jobDuration: Histogram<"kind" | "outcome">;
}

const KEY = Symbol.for("@platform/challenge-sdk.process-metrics");

/** The process's metrics (made on first use). */
export function processMetrics(): ProcessMetrics {
  const holder = globalThis as { [KEY]?: ProcessMetrics };
  let metrics = holder[KEY];
  if (metrics === undefined) {
    const registry = createMetricsRegistry({ processMetrics: true });
    metrics = {
      registry,
      jobDuration: new Histogram({
        name: "challenge_job_duration_seconds",
        help: "Time a worker spent on one job, from its claim to its recorded outcome, by queue (kind) and outcome",
        labelNames: ["kind", "outcome"],
        buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600],
        registers: [registry],
      }),
    };
    holder[KEY] = metrics;
  }
  return metrics;
}
