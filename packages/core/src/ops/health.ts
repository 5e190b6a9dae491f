// Liveness and readiness, in the Kubernetes convention. `/livez` answers while the process can
// answer at all (no dependency is checked: a database outage must not get a healthy process
// restarted). `/readyz` runs every registered check (the database, the Docker engine, the chain
// client...) and answers 503 naming the failing ones, so a load balancer stops sending traffic
// until they pass again. `?exclude=<name>` leaves a check out, as Kubernetes' own /readyz does.
import { json } from "../http/app.js";
import { redactText } from "../http/logger.js";

/** One dependency check: resolve when it is usable, throw (or reject) when it is not. */
export type HealthCheck = (signal: AbortSignal) => unknown | Promise<unknown>;

/** Options of {@link HealthChecks.register}. */
export interface HealthCheckOptions {
  /** A check that has not answered by then fails (default 2000 ms). */
  timeoutMs?: number;
}

/** How one check went. */
export interface HealthCheckResult {
  status: "ok" | "failing";
  duration_ms: number;
  /** Why it failed (credentials cut out); only in the detailed report. */
  error?: string;
}

/** The readiness of a server: every check's result. */
export interface HealthReport {
  status: "ok" | "unavailable";
  /** The names of the failing checks (empty when ready). */
  failing: string[];
  checks: Record<string, HealthCheckResult>;
}

/** Options of {@link HealthChecks}. */
export interface HealthChecksOptions {
  /**
   * A report is reused this long (ms, default 1000): a burst of probes costs one round of
   * checks, and concurrent probes share the round in flight.
   */
  cacheMs?: number;
}

const CHECK_NAME = /^[a-z][a-z0-9_-]{0,62}$/;

interface Registered {
  check: HealthCheck;
  timeoutMs: number;
}

function timeoutError(ms: number): Error {
  return new Error(`did not answer within ${ms} ms`);
}

/**
 * The readiness checks of one server. Register a check for each dependency; `run()` runs them
 * all at once, each under its own timeout.
 * @example
 * const health = new HealthChecks();
 * health.register("database", async () => { await sql`select 1`; });
 * const report = await health.run(); // { status: "ok", failing: [], checks: { database: {...} } }
 */
export class HealthChecks {
  private readonly checks = new Map<string, Registered>();
  private readonly cacheMs: number;
  private inFlight: Promise<HealthReport> | undefined;
  private cached: { at: number; report: HealthReport } | undefined;

  constructor(options: HealthChecksOptions = {}) {
    this.cacheMs = options.cacheMs ?? 1000;
  }

  /**
   * Add a check named `name` (lower case, digits, `_` or `-`). A name registered twice is a
   * bug: TypeError.
   */
  register(name: string, check: HealthCheck, options: HealthCheckOptions = {}): void {
    if (!CHECK_NAME.test(name)) throw new TypeError(`health check name ${JSON.stringify(name)}`);
    if (this.checks.has(name)) throw new TypeError(`health check "${name}" is already registered`);
    if (typeof check !== "function") throw new TypeError("a health check is a function");
    this.checks.set(name, { check, timeoutMs: options.timeoutMs ?? 2000 });
    this.cached = undefined;
  }

  /** Remove a check (a dependency that went away for good). */
  unregister(name: string): boolean {
    this.cached = undefined;
    return this.checks.delete(name);
  }

  /** Forget the cached report: a dependency's state changed and the next probe must see it. */
  invalidate(): void {
    this.cached = undefined;
  }

  /** The registered checks' names, in registration order. */
  names(): string[] {
    return [...this.checks.keys()];
  }

  /**
   * Run every check but the `exclude`d ones; a report at most `cacheMs` old is reused, and calls
   * during a round share it.
   */
  async run(options: { exclude?: readonly string[] } = {}): Promise<HealthReport> {
    const excluded = new Set(options.exclude ?? []);
    const full = await this.fullReport();
    if (excluded.size === 0) return full;
    const checks: Record<string, HealthCheckResult> = {};
    for (const [name, result] of Object.entries(full.checks))
      if (!excluded.has(name)) checks[name] = result;
    const failing = full.failing.filter((name) => !excluded.has(name));
    return { status: failing.length ? "unavailable" : "ok", failing, checks };
  }

  private fullReport(): Promise<HealthReport> {
    const now = Date.now();
    if (this.cached && now - this.cached.at < this.cacheMs)
      return Promise.resolve(this.cached.report);
    this.inFlight ??= this.round().then(
      (report) => {
        this.cached = { at: Date.now(), report };
        this.inFlight = undefined;
        return report;
      },
      (error: unknown) => {
        this.inFlight = undefined;
        throw error;
      },
    );
    return this.inFlight;
  }

  private async round(): Promise<HealthReport> {
    const entries = [...this.checks.entries()];
    const results = await Promise.all(entries.map(([, entry]) => runOne(entry)));
    const checks: Record<string, HealthCheckResult> = {};
    const failing: string[] = [];
    entries.forEach(([name], i) => {
      const result = results[i]!;
      checks[name] = result;
      if (result.status !== "ok") failing.push(name);
    });
    return { status: failing.length ? "unavailable" : "ok", failing, checks };
  }
}

async function runOne(entry: Registered): Promise<HealthCheckResult> {
  const started = performance.now();
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      abort.abort(timeoutError(entry.timeoutMs));
      reject(timeoutError(entry.timeoutMs));
    }, entry.timeoutMs);
  });
  try {
    await Promise.race([Promise.resolve().then(() => entry.check(abort.signal)), timeout]);
    return { status: "ok", duration_ms: Math.round(performance.now() - started) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      status: "failing",
      duration_ms: Math.round(performance.now() - started),
      error: redactText(message).slice(0, 300),
    };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The body and status of a `/readyz` answer: 200 when ready, 503 naming the failing checks. With
 * `detail` false (a public listener) the reasons are left out: a failing check's message may
 * name an internal host.
 */
export function readinessResponse(
  report: HealthReport,
  options: { detail?: boolean } = {},
): Response {
  const checks: Record<string, HealthCheckResult> = {};
  for (const [name, result] of Object.entries(report.checks)) {
    const { error, ...rest } = result;
    checks[name] = options.detail && error !== undefined ? { ...rest, error } : rest;
  }
  const body = { status: report.status, failing: report.failing, checks };
  return json(body, {
    status: report.status === "ok" ? 200 : 503,
    headers: { "cache-control": "no-store" },
  });
}

/** The `/livez` answer: the process is alive and its event loop answers. */
export function livenessResponse(): Response {
  return json({ status: "ok" }, { headers: { "cache-control": "no-store" } });
}
