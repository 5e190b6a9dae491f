import {
  type App,
  createApp,
  createLogger,
  type Database,
  type Logger,
  migrate,
  openDatabase,
  type RunningServer,
  serve,
} from "@platform/core";
import { requireAdminToken } from "./admin/admin-auth.js";
import { registerAdminPages } from "./admin/admin-pages.js";
import { registerBrokerRoutes } from "./broker/broker-routes.js";
import { embeddedDatabaseDir, type MasterConfig } from "./config.js";
import { registerDashboardRoutes } from "./dashboard/dashboard-routes.js";
import type { MasterContext } from "./master-context.js";
import { masterMigrations } from "./migrations.js";
import { registerProxyRoutes } from "./proxy/proxy-routes.js";
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
}

/** A master: its app (answer requests in-process), its parts, and its lifecycle. */
export interface Master {
  app: App;
  config: MasterConfig;
  database: Database;
  store: ChallengeStore;
  log: Logger;
  /** What route groups were given; tests use it to reach a group's parts. */
  context: MasterContext;
  /** Serve on the configured host and port, then start background work; returns the server. */
  listen(overrides?: { host?: string; port?: number }): Promise<RunningServer>;
  /** Stop background work, the server if listening, and the database if the master opened it. */
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
  const ownsDatabase = !options.database;
  const database =
    options.database ??
    (await openDatabase(
      config.databaseUrl ? { url: config.databaseUrl } : { dataDir: embeddedDatabaseDir(config) },
    ));
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
    description: "Registry, admin API, proxy, container broker and weights of a platform subnet.",
    logger: log,
    securitySchemes: {
      adminToken: { type: "apiKey", in: "header", name: "X-Admin-Token" },
      brokerToken: { type: "http", scheme: "bearer" },
    },
  });

  app.route({
    method: "GET",
    path: "/health",
    summary: "Liveness and database reachability",
    tags: ["service"],
    handler: async () => {
      await database.sql`select 1`;
      return { status: "ok", database: database.backend };
    },
  });
  app.route({
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

  const starters: (() => void | Promise<void>)[] = [];
  const stoppers: (() => void | Promise<void>)[] = [];
  const context: MasterContext = {
    app,
    config,
    database,
    store,
    log,
    masterKey,
    onListen: (start) => starters.push(start),
    onClose: (stop) => stoppers.push(stop),
  };

  const requireAdmin = requireAdminToken(config.adminToken);
  registerAdminRoutes(app, { store, imagePolicy: config.imagePolicy, requireAdmin });
  registerRegistryRoutes(app, store, {
    network: config.network,
    apiVersion: config.apiVersion,
    masterUid: config.masterUid,
  });
  registerAdminPages(context);
  // Route groups added by later work register here, one line each, with `context`.
  registerBrokerRoutes(context);
  registerRuntimeRoutes(context);
  registerProxyRoutes(context);
  registerDashboardRoutes(context, registerWeightsRoutes(context));
  void context;

  let server: RunningServer | undefined;
  let closing: Promise<void> | undefined;
  return {
    app,
    config,
    database,
    store,
    log,
    context,
    async listen(overrides = {}) {
      server = await serve(app.fetch, {
        host: overrides.host ?? config.host,
        port: overrides.port ?? config.port,
        log,
      });
      for (const start of starters) await start();
      return server;
    },
    close() {
      closing ??= (async () => {
        await server?.close();
        for (const stop of stoppers.reverse()) await stop();
        if (ownsDatabase) await database.close();
      })();
      return closing;
    },
  };
}
