// Prometheus metrics for every server of the platform, on prom-client. Each server keeps its own
// `Registry` (the master's, each challenge instance's), so two servers in one process (the
// `platform dev` stack) never mix their series. Label values must come from bounded sets: route
// templates, status codes, registered slugs, outcomes named in code. Never a raw path, a hotkey,
// an id or anything else a client chooses: every distinct value is a series kept forever.
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { registerProcessMetrics } from "./process-metrics.js";

export { Counter, Gauge, Histogram, Registry };

/** The Content-Type of the Prometheus text format (0.0.4) that `/metrics` answers with. */
export const PROMETHEUS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

/** Options of {@link createMetricsRegistry}. */
export interface MetricsRegistryOptions {
  /**
   * Also collect the process's own metrics (`process_cpu_seconds_total`,
   * `process_resident_memory_bytes`, heap, `nodejs_eventloop_lag_p99_seconds`...), read at
   * scrape time (process-metrics.ts says why not prom-client's defaults).
   */
  processMetrics?: boolean;
}

/**
 * A fresh registry; register a metric on it with `registers: [registry]`.
 * @example
 * const registry = createMetricsRegistry({ processMetrics: true });
 * const runs = new Counter({ name: "my_runs_total", help: "Runs", labelNames: ["outcome"], registers: [registry] });
 */
export function createMetricsRegistry(options: MetricsRegistryOptions = {}): Registry {
  const registry = new Registry();
  if (options.processMetrics) registerProcessMetrics(registry);
  return registry;
}

/**
 * The scrape answer: every registry's series in the Prometheus text format, one after the
 * other (their metric names must not overlap).
 */
export async function metricsResponse(
  registries: Registry | readonly Registry[],
): Promise<Response> {
  const list = Array.isArray(registries) ? registries : [registries as Registry];
  const parts = await Promise.all(list.map((registry) => registry.metrics()));
  const body = parts.filter((part) => part.trim() !== "").join("\n");
  return new Response(body, {
    status: 200,
    headers: { "content-type": PROMETHEUS_CONTENT_TYPE, "cache-control": "no-store" },
  });
}

/**
 * How many series a registry holds (every label combination of every metric, histogram buckets
 * counted once per combination): what a test of label bounds watches.
 */
export async function metricSeriesCount(registry: Registry): Promise<number> {
  const metrics = await registry.getMetricsAsJSON();
  let count = 0;
  for (const metric of metrics) {
    const combinations = new Set<string>();
    for (const value of metric.values as { labels: Record<string, unknown> }[]) {
      const labels = { ...value.labels };
      delete labels["le"];
      combinations.add(JSON.stringify(Object.entries(labels).sort()));
    }
    count += combinations.size;
  }
  return count;
}

/** The label value of something outside a bounded set. */
export const OTHER_LABEL = "_other";

/**
 * `value` when it is one of `known`, else `fallback` (default {@link OTHER_LABEL}): the one way
 * a client-chosen string becomes a label value.
 * @example boundedLabel(slug, registeredSlugs, "_unknown")
 */
export function boundedLabel(
  value: string | null | undefined,
  known: ReadonlySet<string>,
  fallback: string = OTHER_LABEL,
): string {
  return value != null && known.has(value) ? value : fallback;
}

/** An HTTP status as a label value: its three digits, or "other" outside 100-599. */
export function statusLabel(status: number): string {
  return Number.isInteger(status) && status >= 100 && status <= 599 ? String(status) : "other";
}
