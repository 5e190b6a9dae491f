import type { App, Database, HealthChecks, Logger } from "@platform/core";
import type { MasterConfig } from "./config.js";
import type { MasterMetrics } from "./ops/master-metrics.js";
import type { ChallengeStore } from "./registry/challenge-store.js";

/**
 * What every route group of the master is given: the app to mount routes on, the registry,
 * the database, and hooks to start background work with the server and stop it on close.
 */
export interface MasterContext {
  /** The public listener's app: registry, proxy, submission read, weights, dashboard. */
  app: App;
  /**
   * The admin listener's app: admin API and pages, broker, runtime. Its own origin, so content
   * the proxy serves on the public one can never script it.
   */
  adminApp: App;
  config: MasterConfig;
  database: Database;
  store: ChallengeStore;
  log: Logger;
  /** HMAC key for derived tokens and admin sessions. Never log or return it. */
  masterKey: Buffer;
  /**
   * The master's Prometheus registry (GET /metrics on the admin listener). A group adds its
   * metrics with `metrics.counter(...)`, `metrics.gauge(...)` (a `collect` computes a value at
   * scrape time) or `metrics.histogram(...)`; label values from bounded sets only (docs/operations.md).
   * @example context.metrics.gauge({ name: "platform_chain_metagraph_age_seconds", help: "...", collect() { this.set(age()); } });
   */
  metrics: MasterMetrics;
  /**
   * The readiness checks behind GET /readyz (both listeners): the database, the Docker engine,
   * the first registry load. A group adds its dependency with `health.register(name, check)`:
   * `check` resolves while it is usable and throws when not (2 s timeout by default).
   * @example context.health.register("chain", async () => { await chain.ping(); });
   */
  health: HealthChecks;
  /** Run `start` when the master starts serving (schedulers, reapers). */
  onListen(start: () => void | Promise<void>): void;
  /** Run `stop` when the master closes, before the database is closed; last registered runs first. */
  onClose(stop: () => void | Promise<void>): void;
}
