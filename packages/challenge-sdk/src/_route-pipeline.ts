// One request pipeline for every route kind. Authentication always runs BEFORE any input is
// validated (an anonymous caller learns nothing from a 422), and a signed route verifies the
// exact bytes it received before anything parses them. Order:
//   internal/bridge: bearer 401 -> slug 403 -> [bridge: identity 400, nonce 409, registered 403]
//   signed:          media 415 -> size 413 -> signature 401 -> nonce 409 -> registered 403
//   then: auth hook -> params/query/headers/body 422 -> rate limit 429 -> handler
import {
  DEFAULT_BODY_LIMIT,
  HttpError,
  type Logger,
  queryObject,
  type RouteContext,
  readBodyWithLimit,
  requireMediaType,
  toResponse,
  ValidationError,
  type ValidationIssue,
  validateValue,
} from "@platform/core";
import type { TSchema } from "@sinclair/typebox";
import { readBridgeIdentity, readSubmissionFilename } from "./_bridge-identity.js";
import { checkInternalAuth } from "./_internal-auth.js";
import { type RuntimeState, runtimeOf } from "./_runtime-state.js";
import type {
  BridgeMiner,
  RegisteredRoute,
  RequestInfo,
  VerifiedMiner,
} from "./challenge-router.js";
import { decodeJsonBody } from "./json-body.js";
import { verifyMinerRequest } from "./miner-request.js";
import { reserveNonce } from "./nonce-store.js";
import { releaseRateLimit, takeRateLimit } from "./rate-limit.js";

function validated(
  schema: TSchema | undefined,
  value: unknown,
  source: "path" | "query" | "header",
  issues: ValidationIssue[],
): unknown {
  if (!schema) return value;
  const result = validateValue(schema, value, source);
  if (result.ok) return result.value;
  issues.push(...result.issues);
  return value;
}

/** Reads the body with the route's cap, after checking its media type. */
async function readRaw(route: RegisteredRoute, request: Request): Promise<Uint8Array> {
  const { body, contentTypes, bodyLimit } = route.options;
  if (body !== undefined && body !== "raw") requireMediaType(request, ["application/json"]);
  else if (body === "raw" && contentTypes?.length) requireMediaType(request, contentTypes);
  return readBodyWithLimit(request, bodyLimit ?? DEFAULT_BODY_LIMIT);
}

function nonceReused(): HttpError {
  return new HttpError(
    409,
    "nonce_reused",
    "This nonce was already used by this hotkey; sign again with a new nonce",
  );
}

function isSuccess(response: Response): boolean {
  return response.status < 400;
}

/**
 * The core-app handler that runs `route` through the pipeline. Anything but an HttpError is
 * logged on the runtime's logger and answered 500 without internals. A body left unread (the
 * request was refused first) is never read: core's node adapter closes that connection.
 */
export function pipelineHandler(route: RegisteredRoute) {
  return async (core: RouteContext): Promise<Response> => {
    const state = runtimeOf(core.env);
    const log = state.context.log.child({ request_id: core.requestId });
    let response: Response;
    try {
      response = await run(route, core, state, log);
    } catch (error) {
      let refusal = error;
      if (!(refusal instanceof HttpError)) {
        log.error("unhandled error", { method: core.request.method, path: route.path, error });
        refusal = new HttpError(500, "internal_error", "Internal Server Error", {
          extra: { request_id: core.requestId },
        });
      }
      response = (refusal as HttpError).toResponse();
    }
    return response;
  };
}

async function run(
  route: RegisteredRoute,
  core: RouteContext,
  state: RuntimeState,
  log: Logger,
): Promise<Response> {
  const { request, url } = core;
  const info: RequestInfo = {
    ...state.context,
    log,
    request,
    url,
    requestId: core.requestId,
    env: core.env,
  };
  let miner: VerifiedMiner | BridgeMiner | undefined;
  let rawBody: Uint8Array | undefined;
  let filename: string | null = null;

  if (route.access === "internal" || route.access === "bridge") {
    await checkInternalAuth(info, state.token, route.bearer);
  }
  if (route.access === "bridge") {
    const identity = readBridgeIdentity(request.headers);
    filename = readSubmissionFilename(request.headers);
    if (route.reserveNonce !== false && identity.nonce !== null) {
      if (!(await reserveNonce(info.sql, identity.hotkey, identity.nonce))) throw nonceReused();
      await state.maintain();
    }
    miner = identity;
  }
  if (route.access === "signed") {
    rawBody = await readRaw(route, request);
    const verified = verifyMinerRequest({
      headers: request.headers,
      method: request.method,
      target: core.env.rawTarget ?? `${url.pathname}${url.search}`,
      body: rawBody,
      slug: info.slug,
    });
    if (!(await reserveNonce(info.sql, verified.hotkey, verified.nonce))) throw nonceReused();
    await state.maintain();
    miner = verified;
  }
  if (miner && route.registered && !(await route.registered(miner.hotkey, info))) {
    throw new HttpError(
      403,
      "hotkey_not_registered",
      "This hotkey is not registered on the subnet",
    );
  }
  if (route.auth) await route.auth(info);

  const { options } = route;
  const issues: ValidationIssue[] = [];
  const params = validated(options.params, core.params, "path", issues);
  const query = validated(options.query, queryObject(url, options.query), "query", issues);
  const headers = validated(options.headers, Object.fromEntries(request.headers), "header", issues);
  if (issues.length) throw new ValidationError(issues);
  let body: unknown;
  if (options.body !== undefined) {
    rawBody ??= await readRaw(route, request);
    body = options.body === "raw" ? rawBody : decodeJsonBody(options.body, rawBody);
  }

  let slot: { bucket: string; key: string; slot: string } | undefined;
  if (miner && route.rateLimit) {
    const bucket = route.rateLimit.bucket ?? `${route.methods.join(",")} ${route.path}`;
    const taken = await takeRateLimit(info.sql, {
      bucket,
      key: miner.hotkey,
      limit: route.rateLimit.limit,
      windowSeconds: route.rateLimit.windowSeconds,
    });
    if (!taken.ok) {
      throw new HttpError(429, "rate_limited", "Too many requests for this hotkey; retry later", {
        headers: { "retry-after": String(taken.retryAfterSeconds) },
        extra: { retry_after_seconds: taken.retryAfterSeconds },
      });
    }
    slot = { bucket, key: miner.hotkey, slot: taken.slot };
  }

  const ctx = {
    ...info,
    params,
    query,
    headers,
    body,
    ...(miner ? { miner } : {}),
    ...(route.access === "signed" ? { rawBody } : {}),
    ...(route.access === "bridge" ? { filename } : {}),
  };
  let response: Response;
  try {
    response = toResponse(await route.handler(ctx as never));
  } catch (error) {
    // A refused or failed request does not count against the hotkey's limit.
    if (slot) await releaseRateLimit(info.sql, slot).catch(() => {});
    throw error;
  }
  if (slot && !isSuccess(response)) await releaseRateLimit(info.sql, slot);
  return response;
}
