// The master's Prometheus metrics: one registry per master (two masters in one process never
// mix), served on the ADMIN listener at GET /metrics (docs/operations.md). Label values come
// from bounded sets only: a slug is a registered challenge's (anything else is `_unknown`), a
// code an HTTP status, an outcome a word named in code. Other parts of the master (the chain
// client, say) add their own metrics with `counter`, `gauge` and `histogram` below.
import {
  Counter,
  createMetricsRegistry,
  Gauge,
  Histogram,
  type Registry,
  statusLabel,
} from "@platform/core";
import { MASTER_VERSION } from "../version.js";

/** The slug label of a request for no registered (active) challenge: one value for all of them. */
export const UNKNOWN_SLUG = "_unknown";

/** How a broker run ended, as `platform_broker_runs_total` counts it. */
export type BrokerRunOutcome =
  | "succeeded"
  | "exited_nonzero"
  | "timed_out"
  | "oom_killed"
  | "removed"
  | "aborted"
  | "refused"
  | "quota"
  | "error";

/** Options of {@link MasterMetrics}. */
export interface MasterMetricsOptions {
  /**
   * Record nothing (every recording method returns at once; `/metrics` still answers, with the
   * metrics other parts register). Only the bench turns metrics off, to measure what they cost.
   */
  enabled?: boolean;
}

type MetricConfig<L extends string> = {
  name: string;
  help: string;
  labelNames?: readonly L[];
};

/**
 * The master's metrics registry and the recorders the proxy, broker and weights use.
 * @example
 * // From a route group (context.metrics): a gauge read at scrape time.
 * context.metrics.gauge({ name: "platform_chain_metagraph_age_seconds", help: "...",
 *   collect() { this.set(ageSeconds()); } });
 */
export class MasterMetrics {
  /** Everything `/metrics` serves; register a metric on it with `registers: [registry]`. */
  readonly registry: Registry;
  /** False when recording is off (the bench's baseline). */
  readonly enabled: boolean;
  private readonly proxyRequests: Counter<"slug" | "code">;
  private readonly proxyDuration: Histogram<"slug">;
  private readonly signedUploads: Counter<"slug" | "outcome">;
  private readonly collections: Counter<"slug" | "status">;
  private readonly collectionDuration: Histogram;
  private readonly brokerRuns: Counter<"slug" | "outcome">;
  private readonly brokerRunning: Gauge<"slug">;
  private readonly brokerDuration: Histogram<"slug">;

  constructor(options: MasterMetricsOptions = {}) {
    this.enabled = options.enabled ?? true;
    this.registry = createMetricsRegistry({ processMetrics: this.enabled });
    this.proxyRequests = this.counter({
      name: "platform_proxy_requests_total",
      help: "Requests to a challenge through the public proxy (passthrough, signed upload, submission status), by challenge and the status answered",
      labelNames: ["slug", "code"],
    });
    this.proxyDuration = this.histogram({
      name: "platform_proxy_request_duration_seconds",
      help: "Time from a proxied request's arrival to its answer's head (the challenge's, or the proxy's refusal)",
      labelNames: ["slug"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    });
    this.signedUploads = this.counter({
      name: "platform_signed_uploads_total",
      help: "Signed submission uploads, by challenge and outcome: accepted, challenge_rejected or challenge_error when forwarded, else the master's refusal code (invalid_signature, nonce_reused, ...)",
      labelNames: ["slug", "outcome"],
    });
    this.collections = this.counter({
      name: "platform_weights_collections_total",
      help: "Calls to a challenge's get_weights during weights collections, by challenge and status (ok, failed)",
      labelNames: ["slug", "status"],
    });
    this.collectionDuration = this.histogram({
      name: "platform_weights_collection_duration_seconds",
      help: "Time one weights collection took (every active challenge polled, aggregated, stored)",
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    });
    this.brokerRuns = this.counter({
      name: "platform_broker_runs_total",
      help: "Workloads the broker was asked to run, by challenge and outcome (succeeded, exited_nonzero, timed_out, oom_killed, removed, aborted, refused, quota, error)",
      labelNames: ["slug", "outcome"],
    });
    this.brokerRunning = this.gauge({
      name: "platform_broker_running",
      help: "Workloads running now on this master's broker, by challenge",
      labelNames: ["slug"],
    });
    this.brokerDuration = this.histogram({
      name: "platform_broker_run_duration_seconds",
      help: "Time from a workload's admission to its end, by challenge",
      labelNames: ["slug"],
      buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600],
    });
    this.gauge({
      name: "platform_info",
      help: "The master's version (always 1)",
      labelNames: ["version"],
    }).set({ version: MASTER_VERSION }, 1);
  }

  /** A counter on the master's registry (throws if the name is taken). */
  counter<L extends string = string>(config: MetricConfig<L>): Counter<L> {
    return new Counter<L>({
      ...config,
      labelNames: config.labelNames ?? [],
      registers: [this.registry],
    });
  }

  /**
   * A gauge on the master's registry; give `collect` to compute its value at scrape time (it
   * runs with `this` as the gauge).
   */
  gauge<L extends string = string>(
    config: MetricConfig<L> & { collect?: (this: Gauge<L>) => void | Promise<void> },
  ): Gauge<L> {
    return new Gauge<L>({
      ...config,
      labelNames: config.labelNames ?? [],
      registers: [this.registry],
    });
  }

  /** A histogram on the master's registry (`buckets` in the unit of its name). */
  histogram<L extends string = string>(
    config: MetricConfig<L> & { buckets?: number[] },
  ): Histogram<L> {
    return new Histogram<L>({
      ...config,
      labelNames: config.labelNames ?? [],
      registers: [this.registry],
    });
  }

  /** One proxied request answered with `status` after `seconds`. */
  proxyRequest(slug: string, status: number, seconds: number): void {
    if (!this.enabled) return;
    this.proxyRequests.inc({ slug, code: statusLabel(status) });
    this.proxyDuration.observe({ slug }, seconds);
  }

  /** One signed upload and how it ended. */
  signedUpload(slug: string, outcome: string): void {
    if (!this.enabled) return;
    this.signedUploads.inc({ slug, outcome });
  }

  /** One challenge's get_weights call in a collection. */
  weightsCollection(slug: string, status: "ok" | "failed"): void {
    if (!this.enabled) return;
    this.collections.inc({ slug, status });
  }

  /** A whole collection took `seconds`. */
  weightsCollected(seconds: number): void {
    if (!this.enabled) return;
    this.collectionDuration.observe(seconds);
  }

  /** A workload was admitted and starts running. */
  brokerRunStarted(slug: string): void {
    if (!this.enabled) return;
    this.brokerRunning.inc({ slug });
  }

  /** A workload ended (or was refused: then `started` is false). */
  brokerRunEnded(slug: string, outcome: BrokerRunOutcome, seconds: number, started: boolean): void {
    if (!this.enabled) return;
    this.brokerRuns.inc({ slug, outcome });
    if (started) {
      this.brokerRunning.dec({ slug });
      this.brokerDuration.observe({ slug }, seconds);
    }
  }
}
