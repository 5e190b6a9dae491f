import type { Migration } from "@platform/core";
import type { TObject, TSchema } from "@sinclair/typebox";
import type { ConfigOf } from "./challenge-config.js";
import type { ChallengeRouter } from "./challenge-router.js";
import type { ChallengeContext, SetupContext } from "./route-context.js";
import type { WeightsResult } from "./service-routes.js";

/**
 * Everything a challenge is; see docs/challenge-sdk.md. Write `setup` before `routes` and
 * `weights`: TypeScript infers the state type from `setup` in the order the object is written.
 */
export interface ChallengeDefinition<C extends TObject | undefined = undefined, State = undefined> {
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
  /**
   * Named records published under `components.schemas` of /openapi.json (a spec's record names),
   * beside the SDK's own `HTTPValidationError`, `ValidationError` and `ErrorResponse`.
   */
  schemas?: Readonly<Record<string, TSchema>>;
  /**
   * Internal and bridge routes when no CHALLENGE_TOKEN is configured (development, `allowNoToken`):
   * "open" (the default) serves them without a bearer; "unavailable" answers 503
   * `internal_auth_unconfigured`, for a challenge whose interface says so.
   */
  internalWithoutToken?: "open" | "unavailable";
  /** Extra settings read from the environment: a Type.Object keyed by variable name. */
  config?: C;
  /** The challenge's SQL migrations: a folder URL or path of NNNN_name.sql files, or a list. */
  migrations?: URL | string | readonly Migration[];
  /**
   * Runs once per start, after migrations and before the first request. What it returns is
   * `ctx.state` in every handler, hook and `weights` (a job queue, a client, a cache); what it
   * starts, it stops with `ctx.onClose(...)`.
   * @example setup: ({ sql, onClose }) => { const stop = new AbortController(); onClose(() => stop.abort()); return { queue: createJobQueue(sql) }; }
   */
  setup?: (ctx: SetupContext<ConfigOf<NoInfer<C>>>) => State | Promise<State>;
  /** Declares the routes: `router.public / signed / submission / bridge / internal`. */
  routes?: (router: ChallengeRouter<ConfigOf<NoInfer<C>>, NoInfer<State>>) => void;
  /** GET /internal/v1/get_weights: weights by hotkey; the SDK drops non-positive ones and normalises. */
  weights: (
    ctx: ChallengeContext<ConfigOf<NoInfer<C>>, NoInfer<State>>,
  ) => WeightsResult | Promise<WeightsResult>;
}
