import {
  createApp,
  createLogger,
  DEFAULT_REQUIRED_CAPABILITIES,
  isSlug,
  loadMigrations,
  type Migration,
  type OpenApiDocument,
} from "@platform/core";
import type { TObject } from "@sinclair/typebox";
import { INSTANCE, type InstanceEnv } from "./_instance-link.js";
import { challengeOpenApi, checkNamedSchemas, withNamedSchemas } from "./_openapi.js";
import { pipelineHandler } from "./_route-pipeline.js";
import { SDK_NAMESPACE } from "./_sdk-migrations.js";
import { type ConfigOf, checkConfigSchema } from "./challenge-config.js";
import type { ChallengeDefinition } from "./challenge-definition.js";
import type { StartOptions } from "./challenge-instance.js";
import { type ChallengeRouteInfo, createRouter, type RegisteredRoute } from "./challenge-router.js";
import { type RunningChallenge, startChallenge } from "./running-challenge.js";
import { serviceRoutes } from "./service-routes.js";

/** A defined challenge: its identity and routes, ready to `start()`. */
export interface Challenge<Cfg = unknown, State = unknown> {
  readonly slug: string;
  readonly name: string;
  readonly version: string;
  readonly apiVersion: string;
  readonly description: string | undefined;
  /** What GET /version reports. */
  readonly capabilities: readonly string[];
  /** Every route, the SDK's own included (no database needed). */
  routes(): readonly ChallengeRouteInfo[];
  /** The OpenAPI 3.1 document served at /openapi.json (no database needed). */
  openapi(): OpenApiDocument;
  /**
   * Read the settings, open and migrate the database, run `setup`, listen on HOST:PORT. A
   * process runs `runChallenge(challenge)`; a test calls this (port 0) and `close()`s it.
   */
  start(options?: StartOptions): Promise<RunningChallenge<Cfg, State>>;
}

function routeInfo(route: RegisteredRoute, service: boolean): ChallengeRouteInfo {
  const { body } = route.options;
  const raw = route.submission?.raw ?? [];
  return {
    access: service && route.access === "public" ? "service" : route.access,
    methods: route.methods,
    path: route.path,
    body: body === undefined ? (raw.length > 0 ? "raw" : "none") : body === "raw" ? "raw" : "json",
    contentTypes: route.submission ? raw : route.options.contentTypes,
    credential: credentialOf(route),
    hidden: route.options.hidden === true,
  };
}

function credentialOf(route: RegisteredRoute): ChallengeRouteInfo["credential"] {
  if (route.access === "signed") return "signature";
  if (route.bearer) return "bearer";
  if (route.access === "internal" || route.access === "bridge") return "challenge-token";
  return "none";
}

function checkDefinition(definition: ChallengeDefinition<TObject | undefined, unknown>): void {
  const { slug, version } = definition;
  if (!isSlug(slug)) {
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
  if (definition.setup !== undefined && typeof definition.setup !== "function") {
    throw new TypeError("defineChallenge: `setup` must be a function");
  }
  if ("teardown" in definition) {
    throw new TypeError(
      "defineChallenge: `teardown` is gone: register cleanup with `ctx.onClose(...)` in `setup`",
    );
  }
  checkConfigSchema(definition.config);
  checkNamedSchemas(definition.schemas);
}

/**
 * Define a challenge: its identity, settings, state, routes and weights. The SDK adds GET
 * /health, GET /livez, GET /readyz, GET /version, GET /openapi.json, GET
 * /internal/v1/get_weights and GET /internal/v1/metrics, checks every route
 * against the proxy contract, and authenticates each kind of route before its handler runs.
 * @example
 * const challenge = defineChallenge({
 *   slug: "echo", version: "1.0.0",
 *   routes: (r) => r.submission({ path: "/v1/scores", body: Type.Object({ score: Type.Number() }),
 *     handler: async ({ sql, miner, body }) => { await sql`insert into scores ${sql({ hotkey: miner.hotkey, score: body.score })}`; } }),
 *   weights: async ({ sql }) => weightsFromScores(await sql`select hotkey, score from scores`),
 * });
 * await runChallenge(challenge);
 */
export function defineChallenge<C extends TObject | undefined = undefined, State = undefined>(
  definition: ChallengeDefinition<C, State>,
): Challenge<ConfigOf<C>, State> {
  checkDefinition(definition as ChallengeDefinition<TObject | undefined, unknown>);
  const { slug, version, description } = definition;
  const name = definition.name ?? slug;
  const apiVersion = definition.apiVersion ?? "1.0";
  const capabilities = [
    ...new Set<string>([...DEFAULT_REQUIRED_CAPABILITIES, ...(definition.capabilities ?? [])]),
  ];

  const service = serviceRoutes({
    slug,
    version,
    apiVersion,
    capabilities,
    weights: definition.weights as (ctx: unknown) => ReturnType<typeof definition.weights>,
  });
  const routes: RegisteredRoute[] = [...service];
  const reserved = [...service.map((r) => `GET ${r.path}`), "GET /openapi.json"];
  definition.routes?.(createRouter<ConfigOf<C>, State>(routes, reserved));

  const app = createApp({
    name,
    version,
    ...(description ? { description } : {}),
    openapi: false,
    logger: createLogger({ name: slug }),
    // challenge_http_requests_total: counted on the instance the request ran against.
    observe: ({ route, status, seconds, env }) =>
      (env as InstanceEnv)[INSTANCE]?.metrics.request(route, status, seconds),
  });
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
    document ??= withNamedSchemas(
      challengeOpenApi({ name, version, description }, routes),
      definition.schemas,
    );
    return document;
  };
  app.route({ method: "GET", path: "/openapi.json", hidden: true, handler: () => openapi() });

  const serviceRoutesSet = new Set(service);
  const info: ChallengeRouteInfo[] = [
    ...routes.map((route) => routeInfo(route, serviceRoutesSet.has(route))),
    {
      access: "service",
      methods: ["GET"],
      path: "/openapi.json",
      body: "none",
      credential: "none",
      hidden: true,
    },
  ];

  let authorMigrations: Promise<readonly Migration[]> | undefined;
  const migrations = () => {
    const source = definition.migrations;
    if (source === undefined) return Promise.resolve([]);
    authorMigrations ??= Array.isArray(source)
      ? Promise.resolve(source as readonly Migration[])
      : loadMigrations(source as URL | string);
    return authorMigrations;
  };

  return {
    slug,
    name,
    version,
    apiVersion,
    description,
    capabilities,
    routes: () => info,
    openapi,
    start: (options) =>
      startChallenge<ConfigOf<C>, State>(
        {
          slug,
          version,
          config: definition.config,
          app,
          migrations,
          setup: definition.setup as ((ctx: unknown) => unknown) | undefined,
          internalWithoutToken: definition.internalWithoutToken ?? "open",
        },
        options,
      ),
  };
}
