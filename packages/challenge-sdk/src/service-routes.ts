// The routes every challenge serves without writing them: GET /health, GET /version and the
// master's GET /internal/v1/get_weights (GET /openapi.json is added where the document is built).
// `serviceRoutes` is the SDK's own; GET_WEIGHTS_PATH and WeightsResult are public.
import { ChallengeWeightsResponse } from "@platform/core";
import { Type } from "@sinclair/typebox";
import type { RegisteredRoute } from "./challenge-router.js";
import { normalizeWeights } from "./normalize-weights.js";
import type { ChallengeContext } from "./route-context.js";
import { SDK_VERSION } from "./version.js";

/** Where the master polls weights. */
export const GET_WEIGHTS_PATH = "/internal/v1/get_weights";

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
  ];
}
