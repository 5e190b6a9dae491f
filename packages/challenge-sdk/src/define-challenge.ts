import {
  type AnyRoute,
  type App,
  buildOpenApi,
  ChallengeWeightsResponse,
  createApp,
  createLogger,
  type Database,
  DEFAULT_REQUIRED_CAPABILITIES,
  ErrorResponse,
  initCrypto,
  loadMigrations,
  type Migration,
  migrate,
  type OpenApiDocument,
  openDatabase,
  type ResponseSpec,
  type ServerEnv,
  Slug,
  serve,
} from "@platform/core";
import { type TObject, Type } from "@sinclair/typebox";
import { pipelineHandler } from "./_route-pipeline.js";
import { RUNTIME, type RuntimeEnv, type RuntimeState } from "./_runtime-state.js";
import { migrateSdk, SDK_NAMESPACE } from "./_sdk-migrations.js";
import {
  type ChallengeSettings,
  type ConfigOf,
  checkConfigSchema,
  type LoadChallengeConfigOptions,
  loadChallengeConfig,
} from "./challenge-config.js";
import {
  type ChallengeContext,
  type ChallengeRouteInfo,
  type ChallengeRouter,
  createRouter,
  type RegisteredRoute,
} from "./challenge-router.js";
import { pruneNonces } from "./nonce-store.js";
import { normalizeWeights } from "./normalize-weights.js";
import { pruneRateLimits } from "./rate-limit.js";
import { SDK_VERSION } from "./version.js";

/** What `weights` returns: weights by hotkey, optionally with the epoch they are for. */
export type WeightsResult =
  | Record<string, number>
  | { epoch?: number | null | undefined; weights: Record<string, number> };

/** Everything a challenge is; see docs/challenge-sdk.md. */
export interface ChallengeDefinition<C extends TObject | undefined = undefined> {
  /** The slug the master registers it under: lower-case letters, digits, inner hyphens. */
  slug: string;
  /** Display name (OpenAPI title); the slug by default. */
  name?: string;
  /** The challenge's own version (GET /version). */
  version: string;
  /** Interface version (GET /version `api_version`), "1.0" by default. */
  apiVersion?: string;
  /** Added to the SDK's own capabilities (get_weights, proxy_routes) in GET /version. */
  capabilities?: readonly string[];
  description?: string;
  /** Extra settings read from the environment: a Type.Object keyed by variable name. */
  config?: C;
  /** The challenge's SQL migrations: a folder URL or path of NNNN_name.sql files, or a list. */
  migrations?: URL | string | readonly Migration[];
  /** Declares the routes: `router.public / signed / bridge / internal`. */
  routes?: (router: ChallengeRouter<ConfigOf<NoInfer<C>>>) => void;
  /** GET /internal/v1/get_weights: weights by hotkey; the SDK drops non-positive ones and normalises. */
  weights: (ctx: ChallengeContext<ConfigOf<NoInfer<C>>>) => WeightsResult | Promise<WeightsResult>;
  /** Runs once per start, after migrations and before the first request (seed data, start workers). */
  setup?: (ctx: ChallengeContext<ConfigOf<NoInfer<C>>>) => void | Promise<void>;
  /** Runs once on close, before the database closes (stop workers). */
  teardown?: (ctx: ChallengeContext<ConfigOf<NoInfer<C>>>) => void | Promise<void>;
}

/** How to initialise a challenge; explicit options win over the environment. */
export interface InitOptions {
  /** The environment to read (default `process.env`). */
  env?: Record<string, string | undefined>;
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
}

/** How to start a challenge: {@link InitOptions} plus where to listen. */
export interface StartOptions extends InitOptions {
  /** Wins over PORT (default 8000; 0 picks a free port). */
  port?: number;
  /** Wins over HOST. */
  host?: string;
}

/** One initialised instance of a challenge: its database, config and a `fetch` bound to them. */
export interface ChallengeRuntime<Cfg = unknown> extends ChallengeContext<Cfg> {
  /** Answer one request in-process (never throws). */
  fetch(request: Request, env?: ServerEnv): Promise<Response>;
  /** Delete spent nonces older than 24 h and expired rate-limit rows now. */
  prune(): Promise<{ nonces: number; rateLimits: number }>;
  /** Run `teardown`, then close the database if the runtime opened it. Idempotent. */
  close(): Promise<void>;
}

/** A challenge listening on a socket. */
export interface RunningChallenge<Cfg = unknown> {
  /** Base URL, e.g. http://127.0.0.1:8000 */
  url: string;
  host: string;
  port: number;
  runtime: ChallengeRuntime<Cfg>;
  /** Stop listening (in-flight requests finish briefly), then close the runtime. */
  close(): Promise<void>;
}

/** A defined challenge: an app with its routes, ready to `init()` (in-process) or `start()`. */
export interface Challenge<Cfg = unknown> {
  readonly slug: string;
  readonly name: string;
  readonly version: string;
  readonly apiVersion: string;
  readonly description: string | undefined;
  /** What GET /version reports. */
  readonly capabilities: readonly string[];
  /** The underlying @platform/core app (requests through it need a runtime: use `fetch`). */
  readonly app: App;
  /** Every route, the SDK's own included. */
  routes(): readonly ChallengeRouteInfo[];
  /** The OpenAPI 3.1 document served at /openapi.json. */
  openapi(): OpenApiDocument;
  /** Read the config, open and migrate the database, run `setup`; `fetch` then uses this runtime. */
  init(options?: InitOptions): Promise<ChallengeRuntime<Cfg>>;
  /** Answer a request with the runtime of the latest `init()` (503 before it). */
  fetch(request: Request, env?: ServerEnv): Promise<Response>;
  /** `init()`, then listen on HOST:PORT. */
  start(options?: StartOptions): Promise<RunningChallenge<Cfg>>;
  /** Close the runtime of the latest `init()`. */
  close(): Promise<void>;
}

/** GET /health reply. */
const HealthResponse = Type.Object({
  status: Type.Union([Type.Literal("ok"), Type.Literal("unavailable")]),
  slug: Type.String(),
  version: Type.String(),
  database: Type.Object({
    backend: Type.Union([Type.Literal("postgres"), Type.Literal("pglite")]),
    ok: Type.Boolean(),
  }),
});

/** GET /version reply. */
const VersionResponse = Type.Object({
  version: Type.String(),
  api_version: Type.String(),
  sdk_version: Type.String(),
  capabilities: Type.Array(Type.String()),
});

/** Where the master polls weights. */
export const GET_WEIGHTS_PATH = "/internal/v1/get_weights";

const SLUG = new RegExp(Slug.pattern as string);

const securitySchemes = {
  minerSignature: {
    type: "apiKey",
    in: "header",
    name: "X-Signature",
    description:
      "platform-request-v1 sr25519 signature with X-Hotkey, X-Nonce and X-Timestamp (docs/protocol/signing.md)",
  },
  challengeToken: {
    type: "http",
    scheme: "bearer",
    description:
      "CHALLENGE_TOKEN, with X-Platform-Challenge-Slug (or x-core-challenge-slug) naming this challenge",
  },
};

const errorSpec = (description: string): ResponseSpec => ({ description, schema: ErrorResponse });

function documentedResponses(route: RegisteredRoute): Record<number, ResponseSpec> {
  const out: Record<number, ResponseSpec> = { ...(route.options.responses ?? {}) };
  if (!Object.keys(out).some((status) => Number(status) >= 200 && Number(status) < 300)) {
    out[200] = { description: "OK" };
  }
  const add = (status: number, description: string) => {
    out[status] ??= errorSpec(description);
  };
  if (route.access === "signed") {
    add(401, "Missing, malformed or invalid signature (code says which)");
    add(409, "nonce_reused: this (hotkey, nonce) was already used");
  }
  if (route.access === "internal" || route.access === "bridge") {
    add(401, "invalid_internal_token");
    add(403, "challenge_slug_mismatch");
  }
  if (route.access === "bridge") add(400, "missing_verified_identity or invalid_verified_identity");
  if (route.access === "bridge" && route.reserveNonce !== false) add(409, "nonce_reused");
  if (route.registered) add(403, "hotkey_not_registered");
  if (route.rateLimit) add(429, "rate_limited (Retry-After says when)");
  return out;
}

function docRoute(route: RegisteredRoute): AnyRoute {
  const { options } = route;
  const security =
    route.access === "signed"
      ? ["minerSignature"]
      : route.access === "internal" || route.access === "bridge"
        ? ["challengeToken"]
        : undefined;
  return {
    method: route.methods,
    path: route.path,
    summary: options.summary,
    description: options.description,
    tags: options.tags,
    operationId: options.operationId,
    params: options.params,
    query: options.query,
    headers: options.headers,
    body: options.body,
    contentTypes: options.contentTypes,
    responses: documentedResponses(route),
    hidden: options.hidden,
    ...(security ? { security } : {}),
    handler: () => undefined,
  };
}

function unpackWeights(result: WeightsResult): {
  epoch: number | null;
  weights: Record<string, number>;
} {
  if (result === null || typeof result !== "object") {
    throw new TypeError("weights() must return a record of weights or { epoch, weights }");
  }
  const wrapped =
    "weights" in result && typeof result.weights === "object" && result.weights !== null;
  if (!wrapped) return { epoch: null, weights: result as Record<string, number> };
  const { epoch = null, weights } = result as {
    epoch?: number | null;
    weights: Record<string, number>;
  };
  if (epoch !== null && (!Number.isSafeInteger(epoch) || epoch < 0)) {
    throw new TypeError("weights() returned an epoch that is not a non-negative integer or null");
  }
  return { epoch, weights };
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Define a challenge: its identity, settings, routes and weights. The SDK adds GET /health,
 * GET /version, GET /openapi.json and GET /internal/v1/get_weights, checks every route against
 * the proxy contract, and authenticates each kind of route before its handler runs.
 * @example
 * const challenge = defineChallenge({
 *   slug: "echo", version: "1.0.0",
 *   routes: (r) => r.signed({ method: "POST", path: "/v1/scores", body: Type.Object({ score: Type.Number() }),
 *     handler: async ({ sql, miner, body }) => { await sql`insert into scores ${sql({ hotkey: miner.hotkey, score: body.score })}`; } }),
 *   weights: async ({ sql }) => weightsFromScores(await sql`select hotkey, score from scores`),
 * });
 * await challenge.start();
 */
export function defineChallenge<C extends TObject | undefined = undefined>(
  definition: ChallengeDefinition<C>,
): Challenge<ConfigOf<C>> {
  type Cfg = ConfigOf<C>;
  const { slug, version } = definition;
  if (typeof slug !== "string" || !SLUG.test(slug) || slug.length > 63) {
    throw new TypeError(
      `defineChallenge: slug ${JSON.stringify(slug)} must be lower-case letters, digits and inner hyphens (2-63)`,
    );
  }
  if (slug === SDK_NAMESPACE) {
    throw new TypeError(
      `defineChallenge: the slug "${SDK_NAMESPACE}" is reserved for the SDK's own tables`,
    );
  }
  if (typeof version !== "string" || version.trim() === "") {
    throw new TypeError("defineChallenge: `version` is required");
  }
  if (typeof definition.weights !== "function") {
    throw new TypeError("defineChallenge: `weights` is required (GET /internal/v1/get_weights)");
  }
  checkConfigSchema(definition.config);
  const name = definition.name ?? slug;
  const apiVersion = definition.apiVersion ?? "1.0";
  const capabilities = [
    ...new Set<string>([...DEFAULT_REQUIRED_CAPABILITIES, ...(definition.capabilities ?? [])]),
  ];

  const app = createApp({
    name,
    version,
    ...(definition.description ? { description: definition.description } : {}),
    openapi: false,
    logger: createLogger({ name: slug }),
  });

  const service: RegisteredRoute[] = [
    {
      access: "public",
      methods: ["GET"],
      path: "/health",
      options: {
        method: "GET",
        path: "/health",
        summary: "Health of the challenge and its database",
        tags: ["service"],
        responses: {
          200: { description: "Healthy", schema: HealthResponse },
          503: { description: "The database does not answer", schema: HealthResponse },
        },
      },
      handler: async (ctx: ChallengeContext) => {
        let ok = true;
        try {
          await withTimeout(ctx.sql`select 1`, 2_000);
        } catch (error) {
          ok = false;
          ctx.log.warn("health: database check failed", { error });
        }
        const body = {
          status: ok ? "ok" : "unavailable",
          slug,
          version,
          database: { backend: ctx.db.backend, ok },
        };
        return ok ? body : Response.json(body, { status: 503 });
      },
    },
    {
      access: "public",
      methods: ["GET"],
      path: "/version",
      options: {
        method: "GET",
        path: "/version",
        summary: "Challenge version, API version, SDK version and capabilities",
        tags: ["service"],
        responses: { 200: { description: "Versions", schema: VersionResponse } },
      },
      handler: () => ({ version, api_version: apiVersion, sdk_version: SDK_VERSION, capabilities }),
    },
    {
      access: "internal",
      methods: ["GET"],
      path: GET_WEIGHTS_PATH,
      options: {
        method: "GET",
        path: GET_WEIGHTS_PATH,
        summary: "Normalised weights by hotkey (polled by the master)",
        tags: ["internal"],
        responses: { 200: { description: "Weights", schema: ChallengeWeightsResponse } },
      },
      handler: async (ctx: ChallengeContext<Cfg>) => {
        const { epoch, weights } = unpackWeights(await definition.weights(ctx));
        const normalised = normalizeWeights(weights);
        const dropped = Object.keys(weights).length - Object.keys(normalised).length;
        if (dropped > 0) ctx.log.debug("get_weights: dropped non-positive weights", { dropped });
        return { challenge_slug: slug, epoch, weights: normalised };
      },
    },
  ];
  const routes: RegisteredRoute[] = [...service];
  const reserved = [...service.map((r) => `GET ${r.path}`), "GET /openapi.json"];
  definition.routes?.(createRouter<Cfg>(routes, reserved));
  for (const route of routes) {
    app.route({
      method: route.methods,
      path: route.path,
      body: "stream",
      hidden: true,
      handler: pipelineHandler(route),
    });
  }

  let document: OpenApiDocument | undefined;
  const openapi = () => {
    document ??= buildOpenApi(
      {
        name,
        version,
        ...(definition.description ? { description: definition.description } : {}),
        securitySchemes,
      },
      routes.map(docRoute),
    );
    return document;
  };
  app.route({ method: "GET", path: "/openapi.json", hidden: true, handler: () => openapi() });

  const serviceRoutes = new Set(service);
  const routeInfo: ChallengeRouteInfo[] = [
    ...routes.map((route) => ({
      access:
        serviceRoutes.has(route) && route.access === "public" ? ("service" as const) : route.access,
      methods: route.methods,
      path: route.path,
      body:
        route.options.body === undefined
          ? ("none" as const)
          : route.options.body === "raw"
            ? ("raw" as const)
            : ("json" as const),
      contentTypes: route.options.contentTypes,
      hidden: route.options.hidden === true,
    })),
    { access: "service", methods: ["GET"], path: "/openapi.json", body: "none", hidden: true },
  ];

  let authorMigrations: Promise<readonly Migration[]> | undefined;
  const loadAuthorMigrations = () => {
    const source = definition.migrations;
    if (source === undefined) return Promise.resolve([]);
    authorMigrations ??= Array.isArray(source)
      ? Promise.resolve(source as readonly Migration[])
      : loadMigrations(source as URL | string);
    return authorMigrations;
  };

  let current: ChallengeRuntime<Cfg> | undefined;

  const init = async (options: InitOptions = {}): Promise<ChallengeRuntime<Cfg>> => {
    const configOptions: LoadChallengeConfigOptions<C> = { slug, env: options.env ?? process.env };
    if (definition.config) configOptions.config = definition.config;
    if (options.databaseUrl !== undefined) configOptions.databaseUrl = options.databaseUrl;
    if (options.dataDir !== undefined) configOptions.dataDir = options.dataDir;
    if (options.allowNoToken !== undefined) configOptions.allowNoToken = options.allowNoToken;
    const { settings, config } = loadChallengeConfig(configOptions);
    const log = createLogger({ name: slug, level: settings.logLevel });
    await initCrypto();
    const db = options.db ?? (await openOwnDatabase(settings, options));
    const ownsDb = options.db === undefined;
    try {
      await migrateSdk(db.sql);
      const mine = await loadAuthorMigrations();
      if (mine.length > 0) await migrate(db.sql, { namespace: slug, migrations: mine });
    } catch (error) {
      if (ownsDb) await db.close().catch(() => {});
      throw error;
    }
    const context: ChallengeContext<Cfg> = { slug, sql: db.sql, db, config, settings, log };
    if (settings.challengeToken === null) {
      log.warn("running WITHOUT CHALLENGE_TOKEN (development): internal routes take no bearer");
    }
    try {
      await definition.setup?.(context);
    } catch (error) {
      if (ownsDb) await db.close().catch(() => {});
      throw error;
    }

    const intervalMs = (options.maintenanceIntervalSeconds ?? 600) * 1000;
    let lastPrune = Number.NEGATIVE_INFINITY;
    const prune = async () => ({
      nonces: await pruneNonces(db.sql),
      rateLimits: await pruneRateLimits(db.sql),
    });
    const state: RuntimeState = {
      context: context as ChallengeContext<unknown>,
      token: settings.challengeToken,
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
    let closing: Promise<void> | undefined;
    const runtime: ChallengeRuntime<Cfg> = {
      ...context,
      fetch: (request, env = {}) => app.fetch(request, { ...env, [RUNTIME]: state } as RuntimeEnv),
      prune,
      close: () =>
        (closing ??= (async () => {
          if (current === runtime) current = undefined;
          try {
            await definition.teardown?.(context);
          } finally {
            if (ownsDb) await db.close();
          }
        })()),
    };
    current = runtime;
    return runtime;
  };

  return {
    slug,
    name,
    version,
    apiVersion,
    description: definition.description,
    capabilities,
    app,
    routes: () => routeInfo,
    openapi,
    init,
    fetch: (request, env = {}) => (current ? current.fetch(request, env) : app.fetch(request, env)),
    async start(options = {}) {
      const runtime = await init(options);
      const { settings } = runtime;
      try {
        const server = await serve(runtime.fetch, {
          host: options.host ?? settings.host,
          port: options.port ?? settings.port,
          log: runtime.log,
        });
        runtime.log.info("challenge listening", { url: server.url, slug, version });
        return {
          url: server.url,
          host: server.host,
          port: server.port,
          runtime,
          async close() {
            try {
              await server.close();
            } finally {
              await runtime.close();
            }
          },
        };
      } catch (error) {
        await runtime.close().catch(() => {});
        throw error;
      }
    },
    close: async () => {
      await current?.close();
    },
  };
}

async function openOwnDatabase(
  settings: ChallengeSettings,
  options: InitOptions,
): Promise<Database> {
  // env: {} because `settings` already read DATABASE_URL from the environment the caller chose.
  if (settings.databaseUrl) return openDatabase({ url: settings.databaseUrl, env: {} });
  if (options.memory) return openDatabase({ memory: true, env: {} });
  return openDatabase({ env: {}, ...(settings.dataDir ? { dataDir: settings.dataDir } : {}) });
}
