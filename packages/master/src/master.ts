import {
  type App,
  createApp,
  createLogger,
  type Database,
  HealthChecks,
  type Logger,
  migrate,
  type RunningServer,
  serve,
  startTracing,
} from "@platform/core";
import { requireAdminToken } from "./admin/admin-auth.js";
import { registerAdminPages } from "./admin/admin-pages.js";
import { brokerOf, registerBrokerRoutes } from "./broker/broker-routes.js";
import { registerChainRoutes } from "./chain/chain-routes.js";
import type { MasterConfig } from "./config.js";
import { registerDashboardRoutes } from "./dashboard/dashboard-routes.js";
import type { MasterContext } from "./master-context.js";
import { masterMigrations } from "./migrations.js";
import { openMasterDatabase } from "./open-master-database.js";
import { MasterMetrics } from "./ops/master-metrics.js";
import { registerOperationsRoutes } from "./ops/operations-routes.js";
import { registerProxyRoutes } from "./proxy/proxy-routes.js";
import { registerReconciler } from "./reconciler/reconciler-routes.js";
import { registerAdminRoutes } from "./registry/admin-routes.js";
import { ChallengeStore } from "./registry/challenge-store.js";
import { registerRegistryRoutes } from "./registry/registry-routes.js";
import { registerRuntimeRoutes } from "./runtime/runtime-routes.js";
import { loadMasterKey } from "./secrets/master-key.js";
import { MASTER_API_VERSION, MASTER_VERSION } from "./version.js";
import { registerWeightsRoutes } from "./weights/weights-routes.js";

/** Options of {@link createMaster} beyond the configuration. */
export interface CreateMasterOptions {
  /** Use this database instead of opening one from the config (tests pass a fresh one). */
  database?: Database;
  /** The master key; read or generated under the data dir when absent. */
  masterKey?: Buffer;
  logger?: Logger;
  /**
   * Record metrics (default true). Off only to measure what they cost (the bench): /metrics
   * then serves only what other parts register.
   */
  metrics?: boolean;
}

/** Where {@link Master.listen} overrides the configured addresses. */
export interface MasterListenOverrides {
  host?: string;
  /** The public port; when given without `adminPort`, the admin one is this plus one (0: 0). */
  port?: number;
  adminHost?: string;
  adminPort?: number;
}

/** The public listener as {@link Master.listen} started it, with the admin listener beside it. */
export interface MasterServer extends RunningServer {
  /** The admin pages, admin API and broker: a different origin from the public one. */
  admin: RunningServer;
}

/**
 * A master: its two apps (answer requests in-process), its parts, and its lifecycle. `app` is
 * the public surface (registry, proxy, submission read, weights, dashboard); `adminApp` the
 * admin pages, admin API and container broker, served on a listener of their own so that
 * challenge content, served on the public origin, can never script them.
 */
export interface Master {
  app: App;
  adminApp: App;
  config: MasterConfig;
  database: Database;
  store: ChallengeStore;
  log: Logger;
  /** What route groups were given; tests use it to reach a group's parts. */
  context: MasterContext;
  /** Serve both listeners on their configured addresses, then start background work. */
  listen(overrides?: MasterListenOverrides): Promise<MasterServer>;
  /** Stop background work, the servers if listening, and the database if the master opened it. */
  close(): Promise<void>;
}

/**
 * Assemble the master: open and migrate the database, then mount every route group. Each group
 * lives in its own folder and gets only what it needs.
 */
export async function createMaster(
  config: MasterConfig,
  options: CreateMasterOptions = {},
): Promise<Master> {
  const log = options.logger ?? createLogger({ name: "platform-master" });
  // Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set; a process that started tracing keeps its own.
  // Explicit context: the master passes its spans' parents on itself, so Node's
  // AsyncLocalStorage stays off and tracing costs the proxy almost nothing (docs/operations.md).
  await startTracing({ serviceName: "platform-master", context: "explicit" });
  const ownsDatabase = !options.database;
  // PostgreSQL may still be starting beside it (a fresh deployment): waited for, bounded.
  const database = options.database ?? (await openMasterDatabase(config, log));
  try {
    await migrate(database.sql, { namespace: "master", migrations: await masterMigrations() });
  } catch (error) {
    if (ownsDatabase) await database.close();
    throw error;
  }
  const masterKey = options.masterKey ?? loadMasterKey(config.dataDir).key;
  const store = new ChallengeStore(database.sql, masterKey, config.proxy.activeCacheMs);
  const app = createApp({
    name: "platform-master",
    version: MASTER_VERSION,
    description:
      "The public listener of a platform subnet's master: registry, proxy, submission read, weights and dashboard.",
    logger: log,
  });
  const adminApp = createApp({
    name: "platform-master-admin",
    version: MASTER_VERSION,
    description:
      "The admin listener of a platform subnet's master: admin pages, admin API and container broker.",
    logger: log,
    securitySchemes: {
      adminToken: { type: "apiKey", in: "header", name: "X-Admin-Token" },
      brokerToken: { type: "http", scheme: "bearer" },
      metricsToken: { type: "http", scheme: "bearer" },
    },
  });

  for (const surface of [app, adminApp]) {
    surface.route({
      method: "GET",
      path: "/health",
      summary: "Liveness and database reachability",
      tags: ["service"],
      handler: async () => {
        await database.sql`select 1`;
        return { status: "ok", database: database.backend };
      },
    });
    surface.route({
      method: "GET",
      path: "/version",
      summary: "Master release and API version",
      tags: ["service"],
      handler: () => ({
        service: "platform-master",
        version: MASTER_VERSION,
        api_version: MASTER_API_VERSION,
      }),
    });
  }

  const starters: (() => void | Promise<void>)[] = [];
  const stoppers: (() => void | Promise<void>)[] = [];
  const context: MasterContext = {
    app,
    adminApp,
    config,
    database,
    store,
    log,
    masterKey,
    metrics: new MasterMetrics({ enabled: options.metrics !== false }),
    health: new HealthChecks(),
    onListen: (start) => starters.push(start),
    onClose: (stop) => stoppers.push(stop),
  };

  // Admin-side groups (admin API and pages, broker, runtime) mount on `context.adminApp`:
  // nothing they serve is reachable on the public origin, where challenge content lives.
  const requireAdmin = requireAdminToken(config.adminToken);
  registerAdminRoutes(adminApp, {
    store,
    imagePolicy: config.imagePolicy,
    internalUrlPolicy: config.internalUrlPolicy,
    requireAdmin,
  });
  registerRegistryRoutes(app, store, {
    network: config.network,
    apiVersion: config.apiVersion,
    masterUid: config.masterUid,
  });
  registerAdminPages(context);
  // Route groups added by later work register here, one line each, with `context`; a group
  // mounts on `context.app` (public) or `context.adminApp` (admin), never on both.
  registerBrokerRoutes(context);
  const runtime = registerRuntimeRoutes(context);
  // Keeps every active challenge's container running (PLATFORM_RECONCILER, docs/master.md).
  registerReconciler(context, runtime, runtime.instanceId);
  // The passthrough also runs node-native in front of the public app (same answers, faster).
  const nativePassthrough = registerProxyRoutes(context);
  const chain = registerChainRoutes(context);
  registerDashboardRoutes(context, registerWeightsRoutes(context, chain?.metagraph), chain);
  // /livez and /readyz on both listeners, /metrics on the admin one (docs/operations.md).
  registerOperationsRoutes(context, { broker: brokerOf(context) });

  let server: RunningServer | undefined;
  let adminServer: RunningServer | undefined;
  let closing: Promise<void> | undefined;
  return {
    app,
    adminApp,
    config,
    database,
    store,
    log,
    context,
    async listen(overrides = {}) {
      const port = overrides.port ?? config.port;
      const adminPort =
        overrides.adminPort ??
        (overrides.port === undefined ? config.adminPort : port === 0 ? 0 : port + 1);
      server = await serve(app.fetch, {
        host: overrides.host ?? config.host,
        port,
        log,
        nodeHandler: nativePassthrough,
      });
      try {
        adminServer = await serve(adminApp.fetch, {
          host: overrides.adminHost ?? config.adminHost,
          port: adminPort,
          log,
        });
      } catch (error) {
        await server.close();
        server = undefined;
        throw error;
      }
      for (const start of starters) await start();
      const publicServer = server;
      const admin = adminServer;
      return {
        ...publicServer,
        admin,
        async close(graceMs?: number) {
          await Promise.all([publicServer.close(graceMs), admin.close(graceMs)]);
        },
      };
    },
    close() {
      closing ??= (async () => {
        await Promise.all([server?.close(), adminServer?.close()]);
        for (const stop of stoppers.reverse()) await stop();
        if (ownsDatabase) await database.close();
      })();
      return closing;
    },
  };
}
