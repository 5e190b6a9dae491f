// One request pipeline for every route kind. Authentication always runs BEFORE any input is
// validated (an anonymous caller learns nothing from a 422), and a signed route verifies the
// exact bytes it received before anything parses them. Order:
//   internal/bridge: bearer 401 -> slug 403 -> [bridge: identity 400, nonce 409, registered 403]
//   signed:          media 415 -> size 413 -> signature 401 -> nonce 409 -> registered 403
//   public:          [own bearer 401, or what the check throws]
//   then: auth hook -> params/query/headers/body 422 -> [archive 400/413] -> rate limit 429
//         -> handler
// A submission is a signed route and a bridge route sharing one handler, options and bucket.
// A route's own bearer check resolves the token to the record it opens: the handler's `bearer`.
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
import { type InstanceLink, instanceOf } from "./_instance-link.js";
import { checkInternalAuth, checkPublicBearer } from "./_internal-auth.js";
import { decodeJsonBody } from "./_json-body.js";
import { verifyMinerRequest } from "./_miner-request.js";
import {
  type CheckedArchive,
  decodeArchiveBase64,
  readArchive,
  type SubmissionArchive,
} from "./bundle/submission-archive.js";
import type { RegisteredRoute } from "./challenge-router.js";
import { releaseRateLimit, takeRateLimit } from "./rate-limit.js";
import type { BridgeMiner, RequestInfo, VerifiedMiner } from "./route-context.js";

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

/** A body read with the route's cap, after its media type was accepted. */
interface ReadBody {
  bytes: Uint8Array;
  /** The request's media type when the route reads it (JSON schema or a submission). */
  type: string | undefined;
}

/** Reads the body with the route's cap, after checking its media type (415 first). */
async function readRaw(route: RegisteredRoute, request: Request): Promise<ReadBody> {
  const { body, contentTypes, bodyLimit } = route.options;
  let type: string | undefined;
  if (route.submission) {
    const json = body !== undefined ? ["application/json"] : [];
    type = requireMediaType(request, [...json, ...route.submission.raw]);
  } else if (body !== undefined && body !== "raw") {
    type = requireMediaType(request, ["application/json"]);
  } else if (body === "raw" && contentTypes?.length) {
    requireMediaType(request, contentTypes);
  }
  return { bytes: await readBodyWithLimit(request, bodyLimit ?? DEFAULT_BODY_LIMIT), type };
}

/** The handler's `body`: validated JSON, the bytes of a raw route, or undefined for raw submissions. */
function decodeBody(route: RegisteredRoute, read: ReadBody): unknown {
  const schema = route.options.body;
  if (schema === undefined || schema === "raw") return schema === "raw" ? read.bytes : undefined;
  if (route.submission && read.type !== undefined && route.submission.raw.includes(read.type)) {
    return undefined;
  }
  return decodeJsonBody(schema, read.bytes);
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
 * logged on the instance's logger and answered 500 without internals. A body left unread (the
 * request was refused first) is never read: core's node adapter closes that connection.
 */
export function pipelineHandler(route: RegisteredRoute) {
  return async (core: RouteContext): Promise<Response> => {
    let link: InstanceLink;
    try {
      link = instanceOf(core.env);
    } catch (error) {
      return (error as HttpError).toResponse();
    }
    const log = link.context.log.child({ request_id: core.requestId });
    let response: Response;
    try {
      response = await run(route, core, link, log);
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
    if (route.submission) link.metrics.submission(response.status);
    return response;
  };
}

/**
 * The submission's archive: base64 in its JSON field, or the raw bytes; size-checked, read
 * under its limits, hashed. A refusal is an HttpError with the archive's status and code.
 */
async function checkedArchive(
  archive: SubmissionArchive,
  body: unknown,
  raw: Uint8Array | undefined,
  filename: string | null,
): Promise<CheckedArchive> {
  if (filename !== null && archive.filename && !archive.filename.test(filename)) {
    throw new HttpError(
      400,
      "invalid_filename",
      `the file name does not match ${archive.filename}: ${JSON.stringify(filename.slice(0, 80))}`,
    );
  }
  let bytes: Uint8Array;
  if (body === undefined) {
    bytes = raw ?? new Uint8Array();
  } else {
    const field = archive.field ?? "archive";
    const text = (body as Record<string, unknown>)[field];
    if (typeof text !== "string") {
      const code = archive.codes?.invalid_base64 ?? "invalid_base64";
      throw new HttpError(400, code, `${field} is missing`);
    }
    const decoded = decodeArchiveBase64(text, archive);
    if (!decoded.ok) {
      throw new HttpError(decoded.error.status, decoded.error.code, decoded.error.message);
    }
    bytes = decoded.bytes;
  }
  const read = await readArchive(bytes, archive);
  if (!read.ok) throw new HttpError(read.error.status, read.error.code, read.error.message);
  return read.value;
}

async function run(
  route: RegisteredRoute,
  core: RouteContext,
  link: InstanceLink,
  log: Logger,
): Promise<Response> {
  const { request, url } = core;
  const info: RequestInfo = {
    ...link.context,
    log,
    request,
    url,
    requestId: core.requestId,
    env: core.env,
    pathParams: (core.params ?? {}) as Record<string, string>,
  };
  let miner: VerifiedMiner | BridgeMiner | undefined;
  let read: ReadBody | undefined;
  let filename: string | null = null;
  // What the route's own bearer check accepted with (a record, or true).
  let bearer: object | true | undefined;

  if (route.access === "internal" || route.access === "bridge") {
    if (link.token === null && !route.bearer && link.internalWithoutToken === "unavailable") {
      throw new HttpError(
        503,
        "internal_auth_unconfigured",
        "No CHALLENGE_TOKEN is configured: internal routes are unavailable",
      );
    }
    const own = route.bearer ? { check: route.bearer, refusal: route.bearerRefusal } : undefined;
    bearer = await checkInternalAuth(info, link.token, own, route.slugHeader);
  }
  if (route.access === "public" && route.bearer) {
    bearer = await checkPublicBearer(info, route.bearer, route.bearerRefusal);
  }
  if (route.access === "bridge") {
    const identity = readBridgeIdentity(request.headers);
    filename = readSubmissionFilename(request.headers);
    if (route.reserveNonce !== false && identity.nonce !== null) {
      const pair = { hotkey: identity.hotkey, nonce: identity.nonce };
      if (!(await link.spendNonce(pair))) throw nonceReused();
      await link.maintain();
    }
    miner = identity;
  }
  if (route.access === "signed") {
    read = await readRaw(route, request);
    const verified = await verifyMinerRequest(
      {
        headers: request.headers,
        method: request.method,
        target: core.env.rawTarget ?? `${url.pathname}${url.search}`,
        body: read.bytes,
        slug: info.slug,
      },
      link.verify,
    );
    const pair = { hotkey: verified.hotkey, nonce: verified.nonce };
    if (!(await link.spendNonce(pair))) throw nonceReused();
    await link.maintain();
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
  if (options.body !== undefined || route.submission) {
    read ??= await readRaw(route, request);
    body = decodeBody(route, read);
  }
  const archive = route.submission?.archive
    ? await checkedArchive(route.submission.archive, body, read?.bytes, filename)
    : undefined;

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

  const ctx = route.submission
    ? {
        ...info,
        params,
        query,
        headers,
        body,
        mediaType: body === undefined ? read?.type : "application/json",
        rawBody: read?.bytes,
        miner: { ...miner, via: route.access },
        filename,
        ...(archive ? { archive } : {}),
      }
    : {
        ...info,
        params,
        query,
        headers,
        body,
        ...(miner ? { miner } : {}),
        ...(route.bearer ? { bearer } : {}),
        // The exact bytes behind a parsed body: a signature or a byte-exact (canonical JSON)
        // check needs them, and the request stream is spent by now.
        ...(read || route.access === "signed" ? { rawBody: read?.bytes } : {}),
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
