import { HttpError, type Logger, type TraceContext, withSpan } from "@platform/core";
import { Agent } from "undici";
import type { MasterMetrics } from "../ops/master-metrics.js";
import type { ChallengeRow } from "../registry/challenge-row.js";
import type { ChallengeStore } from "../registry/challenge-store.js";
import {
  DEFAULT_INTERNAL_URL_POLICY,
  enforceInternalUrlPolicy,
  type InternalUrlPolicy,
} from "../registry/internal-url-policy.js";
import { MASTER_VERSION } from "../version.js";
import { mapBounded } from "./_map-bounded.js";
import {
  aggregateWeights,
  type ChallengeWeightsInput,
  type FailurePolicy,
} from "./aggregate-weights.js";
import { type ChallengeWeightsFetch, fetchChallengeWeights } from "./fetch-challenge-weights.js";
import { MetagraphError, type MetagraphProvider } from "./metagraph-provider.js";
import type {
  CollectionReport,
  MetagraphState,
  StoredWeightsSnapshot,
  WeightsSnapshotStore,
} from "./weights-snapshot-store.js";

/** Tuning of a {@link WeightsCollector} (the master fills it from `config.weights`). */
export interface WeightsCollectorSettings {
  /** Pause between scheduled runs (ms); 0 runs only on demand. */
  intervalMs: number;
  timeoutMs: number;
  retries: number;
  concurrency: number;
  failurePolicy: FailurePolicy;
  /** First retry backoff (ms); default 250. */
  backoffMs?: number;
}

/** What a {@link WeightsCollector} works with. */
export interface WeightsCollectorOptions {
  challenges: Pick<ChallengeStore, "list" | "challengeToken">;
  snapshots: Pick<WeightsSnapshotStore, "save" | "latestAgeSeconds">;
  /** null: no metagraph configured, so every snapshot's uid vector burns. */
  metagraph: MetagraphProvider | null;
  settings: WeightsCollectorSettings;
  log: Logger;
  /**
   * Checked again before each call, with the challenge's bearer at stake: a row stored before
   * the policy (or written around the admin API) never sends it to a metadata address.
   */
  internalUrlPolicy?: InternalUrlPolicy;
  /** Where collections are counted (platform_weights_collections_total, ...). */
  metrics?: MasterMetrics;
}

/**
 * Polls every active challenge's get_weights, aggregates, and persists a snapshot: on demand
 * and on a schedule. Runs never overlap: a call during a run gets that run's snapshot.
 */
export class WeightsCollector {
  private readonly abort = new AbortController();
  private readonly agent = new Agent({ connections: 4, keepAliveTimeout: 10_000 });
  private running: Promise<StoredWeightsSnapshot> | undefined;
  private ticking: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private started = false;
  private stopped = false;
  private lastGoodUids: Map<string, number> | null = null;

  constructor(private readonly options: WeightsCollectorOptions) {}

  /** Collect now (or join the run in progress) and return the persisted snapshot. */
  collect(): Promise<StoredWeightsSnapshot> {
    if (this.stopped)
      return Promise.reject(new HttpError(503, "master_closing", "The master is shutting down"));
    // With tracing on, one trace per collection: each challenge's get_weights continues it.
    this.running ??= withSpan("weights collection", (trace) => this.run(trace)).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Start the schedule: a first run at once, then one `intervalMs` after each run ends. No-op for interval 0. */
  start(): void {
    if (this.started || this.stopped || this.options.settings.intervalMs <= 0) return;
    this.started = true;
    this.schedule(0);
  }

  /** Stop the schedule, cancel the run in progress (it persists nothing) and release connections. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.abort.abort();
    await this.ticking;
    await this.running?.catch(() => {});
    await this.agent.destroy();
  }

  private schedule(delayMs: number): void {
    // unref: a master that forgot close() must still let its process exit.
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.ticking = this.tick().finally(() => {
        this.ticking = undefined;
      });
    }, delayMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    const { log, snapshots, settings } = this.options;
    try {
      // Replicas share the database: skip when another (or an on-demand run) just collected.
      const age = await snapshots.latestAgeSeconds();
      if (age !== null && age * 1000 < settings.intervalMs / 2) {
        log.debug("weights collection skipped: a fresh snapshot exists", { age_seconds: age });
      } else {
        await this.collect();
      }
    } catch (error) {
      if (!this.stopped)
        log.error("scheduled weights collection failed", { error: (error as Error).message });
    } finally {
      if (!this.stopped) this.schedule(settings.intervalMs);
    }
  }

  /** One collection; `trace` is its span's context, passed on to each challenge's request. */
  private async run(trace: TraceContext): Promise<StoredWeightsSnapshot> {
    const { challenges, snapshots, settings, log } = this.options;
    const startedAt = new Date();
    const t0 = performance.now();
    const rows = await challenges.list(["active"]);
    const [fetched, metagraph] = await Promise.all([
      mapBounded(rows, settings.concurrency, (row) => this.poll(row, trace)),
      this.loadMetagraph(),
    ]);
    if (this.abort.signal.aborted)
      throw new HttpError(503, "master_closing", "The master is shutting down");

    const inputs: ChallengeWeightsInput[] = rows.map((row, i) => {
      const result = fetched[i]!;
      return {
        slug: row.slug,
        emission_percent: row.emission_percent,
        outcome: result.ok
          ? { ok: true, epoch: result.reply.epoch ?? null, weights: result.reply.weights }
          : { ok: false, error: result.error },
      };
    });
    const aggregate = aggregateWeights(inputs, {
      uids: metagraph.map,
      failurePolicy: settings.failurePolicy,
    });
    const collection: CollectionReport = {
      started_at: startedAt.toISOString(),
      duration_ms: Math.round(performance.now() - t0),
      metagraph: metagraph.state,
      challenges: rows.map((row, i) => {
        const result = fetched[i]!;
        const cleaning = aggregate.cleaning[i]!;
        return {
          slug: row.slug,
          status: result.ok ? "ok" : "failed",
          latency_ms: result.latency_ms,
          attempts: result.attempts,
          error: result.ok ? null : result.error,
          dropped_invalid: cleaning.dropped_invalid,
          dropped_unknown: cleaning.dropped_unknown,
        };
      }),
    };
    const snapshot = await snapshots.save(aggregate, {
      failure_policy: settings.failurePolicy,
      collection,
    });
    const { metrics } = this.options;
    for (const entry of collection.challenges) metrics?.weightsCollection(entry.slug, entry.status);
    metrics?.weightsCollected((performance.now() - t0) / 1000);
    for (const entry of collection.challenges) {
      if (entry.status === "failed")
        log.warn("challenge weights collection failed", {
          slug: entry.slug,
          error: entry.error,
          attempts: entry.attempts,
        });
    }
    log.info("weights snapshot computed", {
      id: snapshot.id,
      challenges: rows.length,
      failed: collection.challenges.filter((c) => c.status === "failed").length,
      uids: snapshot.uids.length,
      burned: snapshot.burned,
      metagraph: metagraph.state.status,
    });
    return snapshot;
  }

  private poll(row: ChallengeRow, trace: TraceContext): Promise<ChallengeWeightsFetch> {
    if (!row.internal_base_url) {
      return Promise.resolve({
        ok: false,
        error: "no internal_base_url configured",
        attempts: 0,
        latency_ms: null,
      });
    }
    try {
      enforceInternalUrlPolicy(
        row.internal_base_url,
        this.options.internalUrlPolicy ?? DEFAULT_INTERNAL_URL_POLICY,
      );
    } catch (error) {
      return Promise.resolve({
        ok: false,
        error: (error as Error).message,
        attempts: 0,
        latency_ms: null,
      });
    }
    const { settings } = this.options;
    return fetchChallengeWeights({
      slug: row.slug,
      baseUrl: row.internal_base_url,
      token: this.options.challenges.challengeToken(row),
      timeoutMs: settings.timeoutMs,
      retries: settings.retries,
      ...(settings.backoffMs !== undefined ? { backoffMs: settings.backoffMs } : {}),
      dispatcher: this.agent,
      signal: this.abort.signal,
      userAgent: `platform-master/${MASTER_VERSION}`,
      trace,
    });
  }

  private async loadMetagraph(): Promise<{
    map: Map<string, number> | null;
    state: MetagraphState;
  }> {
    const provider = this.options.metagraph;
    if (!provider) return { map: null, state: { status: "none", hotkeys: 0, error: null } };
    try {
      const map = await provider.uids();
      this.lastGoodUids = map;
      return { map, state: { status: "ok", hotkeys: map.size, error: null } };
    } catch (error) {
      const reason = error instanceof MetagraphError ? error.message : "metagraph provider failed";
      this.options.log.warn("metagraph unavailable", {
        error: reason,
        using_last_good: this.lastGoodUids !== null,
      });
      // A blip in the metagraph source should not burn a whole round: the last good map is
      // at most one interval old, and uids change slowly.
      if (this.lastGoodUids)
        return {
          map: this.lastGoodUids,
          state: { status: "stale", hotkeys: this.lastGoodUids.size, error: reason },
        };
      return { map: null, state: { status: "failed", hotkeys: 0, error: reason } };
    }
  }
}
