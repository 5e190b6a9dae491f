import type { IncomingMessage, ServerResponse } from "node:http";
import { isBlockedProxySegments } from "@platform/challenge-sdk/proxy-contract";
import { type Logger, type NodeHandler, requestIdOf } from "@platform/core";
import { activeUpstream } from "./_active-upstream.js";
import { ClientWatch } from "./_client-watch.js";
import { writeKitErrorAnswer } from "./_kit-error-answer.js";
import { kitRoutesToPassthrough } from "./_kit-route-match.js";
import { nodeRequestBody } from "./_node-request-body.js";
import { observe } from "./_proxy-observation.js";
import { RawRequestHeaders } from "./_raw-request-headers.js";
import { UpstreamResponseWriter } from "./_upstream-response-writer.js";
import { passthroughRequestHeaders } from "./forward-headers.js";
import { bodyToForward, PASSTHROUGH_METHODS, type ProxyDependencies } from "./passthrough-route.js";
import { type ProxyTarget, parseProxyTarget } from "./proxy-path.js";

/**
 * A handler for core's `serve({ nodeHandler })`: true when it took the request (and answers
 * it), false to leave it to the app kit untouched.
 */
export type NativePassthrough = NodeHandler;

/** What the native passthrough needs beyond the kit route's dependencies. */
export interface NativePassthroughDependencies extends ProxyDependencies {
  /** Where its errors are logged: the app's logger, as the kit's would be. */
  log: Logger;
}

const METHODS: ReadonlySet<string> = new Set(PASSTHROUGH_METHODS);

/**
 * The passthrough on node's own request and response, for the public listener: the same
 * answers as the kit's route (passthrough-route.ts) without a web Request, Response or stream
 * per request. It takes only what that route would forward: a request the kit routes elsewhere,
 * or that the route refuses before the registry lookup (400, 403, the kit's 422), is declined
 * and the kit answers it. From the lookup on it answers everything itself: 404, 502 and the
 * challenge's answer, streamed both ways through undici's dispatcher.
 * @example serve(app.fetch, { nodeHandler: createNativePassthrough({ store, upstream, log }) })
 */
export function createNativePassthrough(deps: NativePassthroughDependencies): NativePassthrough {
  return (req, res) => {
    const method = req.method ?? "GET";
    if (!METHODS.has(method)) return false;
    const rawTarget = req.url ?? "/";
    if (!kitRoutesToPassthrough(rawTarget)) return false;
    let target: ProxyTarget;
    try {
      // The same normalisation and judgement as the route, on the same raw target.
      target = parseProxyTarget(rawTarget);
    } catch {
      return false; // the route's 400 or 404, answered by the kit
    }
    if (isBlockedProxySegments(target.segments)) return false; // the route's 403
    void forward(deps, req, res, method, target);
    return true;
  };
}

async function forward(
  deps: NativePassthroughDependencies,
  req: IncomingMessage,
  res: ServerResponse,
  method: string,
  target: ProxyTarget,
): Promise<void> {
  const headers = RawRequestHeaders.of(req);
  // requestIdOf reads only `request.headers.get`, which RawRequestHeaders has with Headers'
  // semantics: the same id for the same headers.
  const requestId = requestIdOf({ headers } as unknown as Request);
  // Metrics and (tracing on) this request's span; a shared no-op when both are off.
  const observation = observe(deps, "passthrough", headers);
  observation.names(target.slug);
  const client = new ClientWatch(res, observation);
  const fail = (error: unknown) => {
    observation.refused(error);
    void writeKitErrorAnswer(res, method, error, requestId, deps.log);
  };
  try {
    const { base } = await activeUpstream(deps.store, target.slug);
    observation.known(target.slug);
    if (client.gone) return;
    const forwarded = bodyToForward(method, headers, true);
    const body = forwarded.forward ? nodeRequestBody(req) : null;
    const writer = new UpstreamResponseWriter({
      req,
      res,
      slug: target.slug,
      requestId,
      upstream: deps.upstream,
      body,
      fail,
      observation,
    });
    client.follow(writer);
    const identity = { slug: target.slug, requestId, remoteAddress: req.socket.remoteAddress };
    const forwardedHeaders = passthroughRequestHeaders(
      headers,
      identity,
      forwarded.contentLength,
      deps.isMasterCredential,
    );
    // Tracing on: the challenge continues this request's span.
    observation.inject(forwardedHeaders);
    deps.upstream.dispatch(
      {
        slug: target.slug,
        base,
        target: `${target.path}${target.query}`,
        method,
        headers: forwardedHeaders,
        body,
      },
      writer,
    );
  } catch (error) {
    fail(error);
  }
}
