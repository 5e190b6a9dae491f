// The master's operations endpoints (docs/operations.md): GET /livez and GET /readyz on both
// listeners, GET /metrics on the admin listener only (the admin token or the scrape token). The
// readiness checks: the database, the Docker engine the broker runs on, the first load of the
// registry (a master that has not read its challenges cannot route), and whatever another group
// registers on `context.health` (the chain client).
import {
  type App,
  flushTracing,
  livenessResponse,
  metricsResponse,
  readinessResponse,
  registerLogSecret,
  secretsEqual,
  tracingEnabled,
} from "@platform/core";
import { Type } from "@sinclair/typebox";
import { presentedAdminToken } from "../admin/admin-auth.js";
import type { Broker } from "../broker/broker.js";
import type { MasterContext } from "../master-context.js";
import { requireMetricsAccess } from "./metrics-token.js";

/** How often a failed first registry load is retried (ms). */
const REGISTRY_RETRY_MS = 2000;

/** What the operations routes check besides the database. */
export interface OperationsOptions {
  /** The broker whose Docker engine /readyz checks (none: no docker check). */
  broker?: Broker | undefined;
}

const ReadinessResponse = Type.Object({
  status: Type.Union([Type.Literal("ok"), Type.Literal("unavailable")]),
  failing: Type.Array(Type.String()),
  checks: Type.Record(
    Type.String(),
    Type.Object({
      status: Type.Union([Type.Literal("ok"), Type.Literal("failing")]),
      duration_ms: Type.Integer(),
      error: Type.Optional(Type.String()),
    }),
  ),
});
const ReadyQuery = Type.Object({ exclude: Type.Optional(Type.Array(Type.String())) });

/**
 * Register the readiness checks, the operations gauges and the routes; load the registry when
 * the master starts listening (retried until it succeeds).
 */
export function registerOperationsRoutes(
  context: MasterContext,
  options: OperationsOptions = {},
): void {
  const { app, adminApp, config, database, store, health, metrics, log } = context;
  // The admin token's shape is the operator's: every log line of the process is cut of it.
  registerLogSecret(config.adminToken);

  // The registry: not ready before this master has read its challenges once.
  let registryLoaded = false;
  let retry: NodeJS.Timeout | undefined;
  let closed = false;
  const loadRegistry = async (): Promise<void> => {
    try {
      const rows = await store.list();
      registryLoaded = true;
      health.invalidate();
      log.info("registry loaded", {
        challenges: rows.length,
        active: rows.filter((row) => row.status === "active").length,
      });
    } catch (error) {
      log.warn("registry load failed; retrying", { error: (error as Error).message });
      if (!closed) {
        retry = setTimeout(() => void loadRegistry(), REGISTRY_RETRY_MS);
        retry.unref();
      }
    }
  };
  context.onListen(() => {
    if (tracingEnabled()) {
      log.info("traces: on (OpenTelemetry over OTLP)", {
        protocol: process.env["OTEL_EXPORTER_OTLP_PROTOCOL"] ?? "http/protobuf",
        sampler: process.env["OTEL_TRACES_SAMPLER"] ?? "parentbased_always_on",
      });
    }
    return loadRegistry();
  });
  context.onClose(async () => {
    closed = true;
    clearTimeout(retry);
    // What this master traced leaves before it is gone (spans are exported in batches).
    await flushTracing();
  });

  health.register("database", async (signal) => {
    const query = database.sql`select 1`;
    // A probe that timed out leaves no query queued behind a dead connection.
    signal.addEventListener("abort", () => void query.cancel(), { once: true });
    await query;
  });
  health.register("registry", () => {
    if (!registryLoaded) throw new Error("the registry has not been loaded yet");
  });
  const broker = options.broker;
  if (broker) {
    health.register("docker", async () => {
      await broker.executor.facts();
    });
  }

  metrics.gauge({
    name: "platform_ready",
    help: "1 when GET /readyz answers 200 (every readiness check passes), else 0",
    async collect() {
      this.set((await health.run()).status === "ok" ? 1 : 0);
    },
  });
  metrics.gauge({
    name: "platform_ready_check",
    help: "1 while a readiness check passes, 0 while it fails, by check",
    labelNames: ["check"],
    async collect() {
      const report = await health.run();
      this.reset();
      for (const [name, result] of Object.entries(report.checks))
        this.set({ check: name }, result.status === "ok" ? 1 : 0);
    },
  });
  metrics.gauge({
    name: "platform_registry_challenges",
    help: "Challenges in the registry, by status",
    labelNames: ["status"],
    async collect() {
      this.reset();
      try {
        const rows = await database.sql<{ status: string; n: number }[]>`
          select status, count(*)::int as n from challenges group by status`;
        for (const row of rows) this.set({ status: row.status }, row.n);
      } catch {
        // The database is away: no series this scrape (platform_ready says why), not a 500.
      }
    },
  });

  // A failure's reason may name an internal host or socket: only an admin (token) reads it.
  const isAdmin = (headers: Headers) => {
    const presented = presentedAdminToken(headers);
    return (
      presented !== null && config.adminToken !== "" && secretsEqual(presented, config.adminToken)
    );
  };
  let lastStatus: "ok" | "unavailable" | undefined;
  const readiness = (surface: App, detail: boolean) =>
    surface.route({
      method: "GET",
      path: "/readyz",
      summary: "Readiness: the database, the Docker engine, the registry loaded, the chain client",
      description:
        "200 when every check passes, else 503 naming the failing checks. `?exclude=<check>` leaves one out." +
        (detail ? " With the admin token, each failure's reason too." : ""),
      tags: ["service"],
      query: ReadyQuery,
      responses: {
        200: { description: "Ready", schema: ReadinessResponse },
        503: { description: "A check fails", schema: ReadinessResponse },
      },
      handler: async ({ query, request }) => {
        const report = await health.run({ exclude: query.exclude ?? [] });
        if (report.status !== lastStatus && query.exclude === undefined) {
          // Logged on change only: a probe every few seconds must not flood the log.
          if (report.status === "ok") {
            if (lastStatus !== undefined) log.info("readiness: ready again");
          } else {
            log.warn("readiness: not ready", {
              failing: report.failing.map((name) => ({
                check: name,
                error: report.checks[name]?.error,
              })),
            });
          }
          lastStatus = report.status;
        }
        return readinessResponse(report, { detail: detail && isAdmin(request.headers) });
      },
    });

  for (const [surface, detail] of [
    [app, false],
    [adminApp, true],
  ] as const) {
    surface.route({
      method: "GET",
      path: "/livez",
      summary: "Liveness: the process answers (no dependency is checked)",
      tags: ["service"],
      responses: { 200: { description: "Alive" } },
      handler: () => livenessResponse(),
    });
    readiness(surface, detail);
  }

  // Metrics on the admin listener only: the public one never serves them.
  adminApp.route({
    method: "GET",
    path: "/metrics",
    summary: "Prometheus metrics of the master (text format 0.0.4)",
    description: "The admin token or PLATFORM_METRICS_TOKEN, as `Authorization: Bearer`.",
    tags: ["service"],
    security: ["adminToken", "metricsToken"],
    before: [requireMetricsAccess(config.adminToken, config.metricsTokenHash)],
    responses: {
      200: { description: "Metrics", contentType: "text/plain" },
      401: { description: "No admin or metrics token" },
    },
    handler: () => metricsResponse(metrics.registry),
  });
}
