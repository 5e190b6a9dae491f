// One running instance of a challenge: its settings read, its database open and migrated, the
// author's `setup` run and its state kept, and the cleanup that undoes all of it in order.
import {
  type App,
  createLogger,
  createVerifyPool,
  type Database,
  flushTracing,
  groupCommit,
  HealthChecks,
  initCrypto,
  type Migration,
  migrate,
  openDatabase,
  registerLogSecret,
  type ServerEnv,
  spendNonces,
  startTracing,
  traceSql,
  tracingEnabled,
  verifySignedRequest,
} from "@platform/core";
import type { TObject } from "@sinclair/typebox";
import { createChallengeMetrics } from "./_challenge-metrics.js";
import { INSTANCE, type InstanceEnv, type InstanceLink } from "./_instance-link.js";
import { migrateSdk } from "./_sdk-migrations.js";
import {
  type ChallengeSettings,
  type LoadChallengeConfigOptions,
  loadChallengeConfig,
} from "./challenge-config.js";
import { pruneNonces } from "./nonce-store.js";
import { pruneRateLimits } from "./rate-limit.js";
import type { ChallengeContext, SetupContext } from "./route-context.js";

/** How to start a challenge; explicit options win over the environment. */
export interface StartOptions {
  /** The environment to read (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** Wins over PORT (default 8000; 0 picks a free port). */
  port?: number;
  /** Wins over HOST. */
  host?: string;
  /** PostgreSQL URL; wins over DATABASE_URL. */
  databaseUrl?: string;
  /** Directory of the embedded PGlite; wins over DATA_DIR. */
  dataDir?: string;
  /** Use an in-memory embedded database (nothing is written). */
  memory?: boolean;
  /** An open database to use instead; the challenge will not close it. */
  db?: Database;
  /** Development only: run without CHALLENGE_TOKEN (internal routes then take no bearer). */
  allowNoToken?: boolean;
  /** How often spent nonces and expired rate-limit rows are pruned (default 600 s). */
  maintenanceIntervalSeconds?: number;
  /**
   * Verify miner signatures on `size` worker threads instead of the event loop (wins over
   * VERIFY_POOL_SIZE; `{ size: 0 }` verifies inline). Worth it when signed traffic is heavy.
   */
  verifyPool?: { size: number };
}

/** One started instance of a challenge: its context, and its routes answered in-process. */
export interface ChallengeInstance<Cfg = unknown, State = unknown>
  extends ChallengeContext<Cfg, State> {
  /** Answer one request in-process, without a socket (never throws; 503 once closed). */
  fetch(request: Request, env?: ServerEnv): Promise<Response>;
  /** Delete spent nonces older than 24 h and expired rate-limit rows now. */
  prune(): Promise<{ nonces: number; rateLimits: number }>;
}

/** What an instance is made from: the parts of a definition that need no database. */
export interface InstanceBlueprint {
  slug: string;
  /** The challenge's version (its metrics' `challenge_info`). */
  version?: string;
  config: TObject | undefined;
  app: App;
  migrations(): Promise<readonly Migration[]>;
  setup: ((ctx: SetupContext) => unknown) | undefined;
  /** ChallengeDefinition.internalWithoutToken, resolved. */
  internalWithoutToken: "open" | "unavailable";
}

/** An instance and the one way to undo it (kept from authors: `RunningChallenge.close` does it). */
export interface OpenedInstance<Cfg, State> {
  instance: ChallengeInstance<Cfg, State>;
  /** Run the `onClose` cleanups (last first), stop the verify pool, close an owned database. */
  close(): Promise<void>;
}

async function openOwnDatabase(settings: ChallengeSettings, options: StartOptions) {
  // env: {} because `settings` already read DATABASE_URL from the environment the caller chose.
  if (settings.databaseUrl) return openDatabase({ url: settings.databaseUrl, env: {} });
  if (options.memory) return openDatabase({ memory: true, env: {} });
  return openDatabase({ env: {}, ...(settings.dataDir ? { dataDir: settings.dataDir } : {}) });
}

function configOptions(blueprint: InstanceBlueprint, options: StartOptions) {
  const out: LoadChallengeConfigOptions<TObject | undefined> = {
    slug: blueprint.slug,
    env: options.env ?? process.env,
  };
  if (blueprint.config) out.config = blueprint.config;
  if (options.port !== undefined) out.port = options.port;
  if (options.host !== undefined) out.host = options.host;
  if (options.databaseUrl !== undefined) out.databaseUrl = options.databaseUrl;
  if (options.dataDir !== undefined) out.dataDir = options.dataDir;
  if (options.allowNoToken !== undefined) out.allowNoToken = options.allowNoToken;
  if (options.verifyPool !== undefined) out.verifyPoolSize = options.verifyPool.size;
  return out;
}

/**
 * Read the settings (a ConfigError before anything opens), open and migrate the database, start
 * the verify pool, run `setup`. Whatever was opened is closed again if a later step fails.
 */
export async function openInstance<Cfg, State>(
  blueprint: InstanceBlueprint,
  options: StartOptions = {},
): Promise<OpenedInstance<Cfg, State>> {
  const { slug } = blueprint;
  const { settings, config } = loadChallengeConfig(configOptions(blueprint, options));
  const log = createLogger({ name: slug, level: settings.logLevel });
  // Whatever an author logs, the credentials this instance holds never reach a line.
  registerLogSecret(settings.challengeToken);
  registerLogSecret(settings.brokerToken);
  // Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set; a process that started tracing keeps its own.
  await startTracing({ serviceName: slug, env: options.env ?? process.env });
  await initCrypto();
  const cleanups: (() => void | Promise<void>)[] = [];
  const db = options.db ?? (await openOwnDatabase(settings, options));
  if (options.db === undefined) cleanups.push(() => db.close());
  // Spans are exported in batches: what this instance traced leaves before it is gone.
  cleanups.push(() => flushTracing());
  // Handlers and setup query through `sql`: with tracing on, every query is a span.
  const sql = tracingEnabled() ? traceSql(db.sql) : db.sql;
  const health = new HealthChecks();
  health.register("database", async (signal) => {
    const query = db.sql`select 1`;
    // A probe that timed out leaves no query queued behind a dead connection.
    signal.addEventListener("abort", () => void query.cancel(), { once: true });
    await query;
  });

  // Last registered, first run; a failing cleanup is logged, the rest still run (the database
  // closes last whatever happened), and the first failure is returned for close() to throw.
  const unwind = async (): Promise<unknown> => {
    let failure: unknown;
    while (cleanups.length > 0) {
      const cleanup = cleanups.pop()!;
      try {
        await cleanup();
      } catch (error) {
        log.error("a cleanup failed while closing", { error });
        failure ??= error;
      }
    }
    return failure;
  };

  let state: unknown;
  let verify: InstanceLink["verify"] = verifySignedRequest;
  try {
    await migrateSdk(db.sql);
    const mine = await blueprint.migrations();
    if (mine.length > 0) await migrate(db.sql, { namespace: slug, migrations: mine });
    if (settings.verifyPoolSize > 0) {
      const pool = await createVerifyPool({ size: settings.verifyPoolSize });
      cleanups.push(() => pool.close());
      verify = (input) => pool.verifySignedRequest(input);
      log.info("verifying signatures on worker threads", { threads: pool.size });
    }
    if (settings.challengeToken === null) {
      log.warn("running WITHOUT CHALLENGE_TOKEN (development): internal routes take no bearer");
    }
    const setupContext: SetupContext = {
      slug,
      sql,
      db,
      config,
      settings,
      log,
      onClose(cleanup) {
        if (typeof cleanup !== "function") throw new TypeError("onClose takes a function");
        cleanups.push(cleanup);
      },
      addReadinessCheck(name, check, checkOptions) {
        health.register(name, check, checkOptions);
      },
    };
    state = await blueprint.setup?.(setupContext);
  } catch (error) {
    await unwind();
    throw error;
  }

  const context: ChallengeContext = { slug, sql, db, config, settings, log, state };
  const intervalMs = (options.maintenanceIntervalSeconds ?? 600) * 1000;
  let lastPrune = Number.NEGATIVE_INFINITY;
  const prune = async () => ({
    nonces: await pruneNonces(db.sql),
    rateLimits: await pruneRateLimits(db.sql),
  });
  const link: InstanceLink = {
    context,
    token: settings.challengeToken,
    internalWithoutToken: blueprint.internalWithoutToken,
    verify,
    // Concurrent requests' nonces share one statement: a commit costs the embedded database far
    // more than a row (docs/performance.md, `signed-upload-pool`).
    spendNonce: groupCommit((pairs) => spendNonces(db.sql, "sdk_nonces", pairs)),
    closed: false,
    health,
    metrics: createChallengeMetrics({
      slug,
      version: blueprint.version ?? "0.0.0",
      sql: db.sql,
      health,
    }),
    async maintain() {
      if (Date.now() - lastPrune < intervalMs) return;
      lastPrune = Date.now();
      try {
        const pruned = await prune();
        if (pruned.nonces || pruned.rateLimits) log.debug("pruned expired rows", pruned);
      } catch (error) {
        log.warn("pruning spent nonces failed; will retry", { error });
      }
    },
  };
  const instance = {
    ...context,
    fetch: (request: Request, env: ServerEnv = {}) =>
      blueprint.app.fetch(request, { ...env, [INSTANCE]: link } as InstanceEnv),
    prune,
  } as ChallengeInstance<Cfg, State>;
  let closing: Promise<void> | undefined;
  return {
    instance,
    close: () =>
      (closing ??= (async () => {
        link.closed = true;
        const failure = await unwind();
        if (failure !== undefined) throw failure;
      })()),
  };
}
