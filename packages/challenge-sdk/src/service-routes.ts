// The routes every challenge serves without writing them: GET /health, GET /livez, GET /readyz,
// GET /version, the master's GET /internal/v1/get_weights and Prometheus' GET
// /internal/v1/metrics (GET /openapi.json is added where the document is built). The master's
// proxy never forwards /health, /livez, /readyz or /version from the public: they are for the
// orchestrator and the operator, on the challenge's internal address.
// `serviceRoutes` is the SDK's own; GET_WEIGHTS_PATH (service-paths.ts) and WeightsResult are public.
import {
  ChallengeWeightsResponse,
  livenessResponse,
  metricsResponse,
  readinessResponse,
} from "@platform/core";
import { Type } from "@sinclair/typebox";
import { type InstanceLink, instanceOf } from "./_instance-link.js";
import { processMetrics } from "./_process-metrics.js";
import type { RegisteredRoute } from "./challenge-router.js";
import { normalizeWeights } from "./normalize-weights.js";
import type { ChallengeContext, RequestInfo } from "./route-context.js";
import { GET_WEIGHTS_PATH, METRICS_PATH } from "./service-paths.js";
import { SDK_VERSION } from "./version.js";

/** GET /readyz reply. */
const ReadinessResponse = Type.Object({
  status: Type.Union([Type.Literal("ok"), Type.Literal("unavailable")]),
  failing: Type.Array(Type.String()),
  checks: Type.Record(
    Type.String(),
    Type.Object({
      status: Type.Union([Type.Literal("ok"), Type.Literal("failing")]),
      duration_ms: Type.Integer(),
    }),
  ),
});

/** What `weights` returns: weights by hotkey, optionally with the epoch they are for. */
export type WeightsResult =
  | Record<string, number>
  | { epoch?: number | null | undefined; weights: Record<string, number> };

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

/** GET /version reply: the spec's field names (the master and operators read them). */
const VersionResponse = Type.Object({
  api_version: Type.String(),
  challenge_version: Type.String(),
  sdk_version: Type.String(),
  capabilities: Type.Array(Type.String()),
});

/** What the service routes report about the challenge. */
export interface ServiceIdentity {
  slug: string;
  version: string;
  apiVersion: string;
  capabilities: readonly string[];
  // A method, so the author's typed `weights` (config and state known) is assignable here.
  weights(ctx: ChallengeContext): WeightsResult | Promise<WeightsResult>;
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

/** The SDK's own routes, registered before the author's so they cannot be shadowed. */
export function serviceRoutes(identity: ServiceIdentity): RegisteredRoute[] {
  const { slug, version, apiVersion, capabilities } = identity;
  return [
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
      path: "/livez",
      options: {
        method: "GET",
        path: "/livez",
        summary: "Liveness: the process answers (no dependency is checked)",
        tags: ["service"],
        responses: { 200: { description: "Alive" } },
      },
      handler: () => livenessResponse(),
    },
    {
      access: "public",
      methods: ["GET"],
      path: "/readyz",
      options: {
        method: "GET",
        path: "/readyz",
        summary: "Readiness: every dependency check (the database, and the challenge's own)",
        description:
          "503 names the failing checks. `?exclude=<check>` leaves one out. The reasons are in the challenge's log.",
        tags: ["service"],
        query: Type.Object({ exclude: Type.Optional(Type.Array(Type.String())) }),
        responses: {
          200: { description: "Ready", schema: ReadinessResponse },
          503: { description: "A check fails", schema: ReadinessResponse },
        },
      },
      handler: async (ctx: RequestInfo & { query: { exclude?: string[] } }) => {
        const link = instanceOf(ctx.env);
        const report = await link.health.run({ exclude: ctx.query.exclude ?? [] });
        readinessChanged(link, report.status, () =>
          ctx.log.warn("readiness: not ready", {
            failing: report.failing.map((name) => ({
              check: name,
              error: report.checks[name]?.error,
            })),
          }),
        );
        return readinessResponse(report);
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
      handler: () => ({
        api_version: apiVersion,
        challenge_version: version,
        sdk_version: SDK_VERSION,
        capabilities,
      }),
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
      handler: async (ctx: ChallengeContext) => {
        const { epoch, weights } = unpackWeights(await identity.weights(ctx));
        const normalised = normalizeWeights(weights);
        const dropped = Object.keys(weights).length - Object.keys(normalised).length;
        if (dropped > 0) ctx.log.debug("get_weights: dropped non-positive weights", { dropped });
        return { challenge_slug: slug, epoch, weights: normalised };
      },
    },
    {
      access: "internal",
      // Prometheus sends the bearer and no platform headers.
      slugHeader: "if-sent",
      methods: ["GET"],
      path: METRICS_PATH,
      options: {
        method: "GET",
        path: METRICS_PATH,
        summary: "Prometheus metrics of the challenge (text format 0.0.4)",
        tags: ["internal"],
        responses: { 200: { description: "Metrics", contentType: "text/plain" } },
      },
      handler: (ctx: RequestInfo) =>
        metricsResponse([instanceOf(ctx.env).metrics.registry, processMetrics().registry]),
    },
  ];
}

const lastReadiness = new WeakMap<InstanceLink, "ok" | "unavailable">();

/** Log only when readiness changes (a probe every few seconds must not flood the log). */
function readinessChanged(
  link: InstanceLink,
  status: "ok" | "unavailable",
  onUnready: () => void,
): void {
  const previous = lastReadiness.get(link);
  lastReadiness.set(link, status);
  if (previous === status) return;
  if (status !== "ok") onUnready();
  else if (previous !== undefined) link.context.log.info("readiness: ready again");
}
