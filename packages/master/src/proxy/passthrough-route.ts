import type { Readable } from "node:stream";
import { isBlockedProxySegments } from "@platform/challenge-sdk/proxy-contract";
import {
  type App,
  HttpError,
  type HttpMethod,
  type RouteContext,
  requestTraceContext,
  type ServerEnv,
} from "@platform/core";
import type { MasterMetrics } from "../ops/master-metrics.js";
import type { ChallengeStore } from "../registry/challenge-store.js";
import { activeUpstream } from "./_active-upstream.js";
import { observe, type ProxyObservation } from "./_proxy-observation.js";
import { streamedBody } from "./_request-body.js";
import {
  type ForwardIdentity,
  type MasterCredentialCheck,
  passthroughRequestHeaders,
  type RequestHeaderReader,
} from "./forward-headers.js";
import { parseProxyTarget } from "./proxy-path.js";
import type { UpstreamClient } from "./upstream-client.js";

/** What the proxy routes need: the registry and the pooled client to challenges. */
export interface ProxyDependencies {
  store: ChallengeStore;
  upstream: UpstreamClient;
  /** True for an Authorization carrying the master's admin token: never forwarded. */
  isMasterCredential?: MasterCredentialCheck;
  /** Where proxied requests are counted (platform_proxy_requests_total, ...); none counts nothing. */
  metrics?: MasterMetrics;
}

/**
 * Run a kit route's forward under one observation: the challenge's status when it answers,
 * the refusal when it throws (499 when the client left first). The kit's own server span covers
 * the request, so the observation makes none.
 */
export async function observedForward(
  deps: ProxyDependencies,
  kind: "passthrough" | "upload",
  request: Request,
  forward: (observation: ProxyObservation) => Promise<Response>,
): Promise<Response> {
  const { signal } = request;
  const observation = observe(deps, kind, undefined, requestTraceContext(request));
  try {
    const response = await forward(observation);
    observation.upstreamAnswered(response.status);
    return response;
  } catch (error) {
    if (signal.aborted) observation.clientLeft();
    else observation.refused(error);
    throw error;
  }
}

/** Methods the passthrough forwards. */
export const PASSTHROUGH_METHODS: readonly HttpMethod[] = [
  "GET",
  "POST",
  "PUT",
  "PATCH",
  "DELETE",
  "OPTIONS",
  "HEAD",
];

/** Where the passthrough is mounted (itty-router syntax). */
export const PASSTHROUGH_PATHS = ["/challenges/:slug", "/challenges/:slug/:path+"] as const;

/** 403 `blocked_path`: a private challenge path, whatever its spelling. */
export function blockedPath(): HttpError {
  return new HttpError(403, "blocked_path", "This path of the challenge is not public");
}

/**
 * Whether a request's body is forwarded, with its declared length. Over a socket HTTP/1.1 says
 * a request has a body only with Content-Length or Transfer-Encoding; in-process requests (not
 * `overSocket`) are judged by their stream alone. GET and HEAD never forward one.
 */
export function bodyToForward(
  method: string,
  headers: RequestHeaderReader,
  overSocket: boolean,
): { forward: boolean; contentLength: string | null } {
  if (method === "GET" || method === "HEAD") return { forward: false, contentLength: null };
  const length = headers.get("content-length");
  const declared = length !== null || headers.get("transfer-encoding") !== null;
  if (length === "0" || (overSocket && !declared)) return { forward: false, contentLength: null };
  return { forward: true, contentLength: length };
}

/** The request body to forward, untouched, or null when there is none ({@link bodyToForward}). */
export function forwardedBody(
  request: Request,
  env: ServerEnv,
): { body: Readable | null; contentLength: string | null } {
  const { forward, contentLength } = bodyToForward(
    request.method,
    request.headers,
    env.rawTarget !== undefined,
  );
  if (!forward || !request.body) return { body: null, contentLength: null };
  return { body: streamedBody(request.body), contentLength };
}

/** Client identity fields of a forwarded request. */
export function forwardIdentity(ctx: RouteContext, slug: string): ForwardIdentity {
  return { slug, requestId: ctx.requestId, remoteAddress: ctx.env.remoteAddress };
}

/**
 * Mount the passthrough: every method on `/challenges/{slug}` and `/challenges/{slug}/{path}`
 * to the active challenge's internal base URL. The path is read from the target as the client
 * sent it, normalised, judged by the block rules (403) and forwarded in its normalised form
 * with the query unchanged; bodies and responses stream both ways.
 */
export function registerPassthroughRoutes(app: App, deps: ProxyDependencies): void {
  const forward = async (ctx: RouteContext, observation: ProxyObservation) => {
    const target = parseProxyTarget(ctx.env.rawTarget ?? `${ctx.url.pathname}${ctx.url.search}`);
    observation.names(target.slug);
    if (isBlockedProxySegments(target.segments)) throw blockedPath();
    const { base } = await activeUpstream(deps.store, target.slug);
    observation.known(target.slug);
    const { body, contentLength } = forwardedBody(ctx.request, ctx.env);
    const headers = passthroughRequestHeaders(
      ctx.request.headers,
      forwardIdentity(ctx, target.slug),
      contentLength,
      deps.isMasterCredential,
    );
    // Tracing on: the challenge continues the kit's span for this request.
    observation.inject(headers);
    return deps.upstream.send({
      slug: target.slug,
      base,
      target: `${target.path}${target.query}`,
      method: ctx.request.method,
      headers,
      body,
      signal: ctx.request.signal,
    });
  };
  // A refused request's body is never read: core's adapter closes that connection instead.
  const handler = (ctx: RouteContext) =>
    observedForward(deps, "passthrough", ctx.request, (observation) => forward(ctx, observation));
  // native-passthrough.ts takes these same requests first on the public listener: see
  // _kit-route-match.ts before changing these paths or mounting anything under /challenges.
  for (const path of PASSTHROUGH_PATHS) {
    app.route({
      method: PASSTHROUGH_METHODS,
      path,
      body: "stream",
      summary: "Public passthrough to an active challenge",
      description:
        "Forwards to the challenge's internal base URL. Private paths (/health, /livez, /readyz, /metrics, /version, /internal, " +
        "benchmark executions) are 403 whatever their spelling; 404 for a challenge that is not active; " +
        "502 when it cannot be reached or times out.",
      tags: ["proxy"],
      handler,
    });
  }
}
