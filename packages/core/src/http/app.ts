import type { Static, TSchema } from "@sinclair/typebox";
import { type IRequest, Router } from "itty-router";
import {
  extractTraceContext,
  failSpan,
  requestSpanContext,
  runInContext,
  startSpan,
  tracingEnabled,
} from "../ops/tracing.js";
import { textResponse } from "./_known-body.js";
import { DEFAULT_BODY_LIMIT, parseJsonBody, readBodyWithLimit, requireMediaType } from "./body.js";
import { HttpError } from "./http-error.js";
import { createLogger, type Logger } from "./logger.js";
import { buildOpenApi, type OpenApiDocument } from "./openapi.js";
import { REQUEST_ID_HEADER, requestIdOf } from "./request-id.js";
import { type ValidationIssue, validateValue } from "./validation.js";
import { ValidationError } from "./validation-error.js";

/** HTTP methods a route can answer. */
export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS" | "HEAD";

/**
 * How a route takes its body: a TypeBox schema (JSON, validated), "raw" (bytes, read with the
 * size limit and checked against `contentTypes`), or "stream" (left untouched, e.g. a proxy).
 */
export type BodySpec = TSchema | "raw" | "stream";

type Infer<S> = S extends TSchema ? Static<S> : Record<string, never>;
type InferBody<B> = B extends TSchema ? Static<B> : B extends "raw" ? Uint8Array : undefined;

/** What the server passes along with each request (the node adapter fills both). */
export interface ServerEnv {
  remoteAddress?: string;
  /** The request target (path and query) exactly as sent, before URL parsing normalised it. */
  rawTarget?: string;
}

/** Everything a handler gets: validated inputs plus the raw request. */
export interface RouteContext<P = unknown, Q = unknown, H = unknown, B = unknown> {
  request: Request;
  url: URL;
  params: P;
  query: Q;
  headers: H;
  body: B;
  requestId: string;
  log: Logger;
  env: ServerEnv;
}

/** A documented response of a route, for OpenAPI. */
export interface ResponseSpec {
  description: string;
  schema?: TSchema;
  contentType?: string;
}

/**
 * A hook that runs before anything is validated or read (auth, rate limits); it throws HttpError
 * to refuse. It sees the raw, unvalidated params, query and headers, and no body.
 */
export type BeforeHook = (ctx: RouteContext) => void | Promise<void>;

/**
 * What a route declares about itself: where it lives, what it accepts, how it is documented.
 * Shared by this kit's routes and the challenge SDK's route kinds (hence unconstrained types).
 */
export interface RouteShape<P = undefined, Q = undefined, H = undefined, B = undefined> {
  method: HttpMethod | readonly HttpMethod[];
  /** itty-router syntax: `/v1/items/:id`, greedy `/files/:path+`. */
  path: string;
  summary?: string;
  description?: string;
  tags?: string[];
  operationId?: string;
  params?: P;
  query?: Q;
  headers?: H;
  body?: B;
  /** Media types a "raw" body accepts (415 otherwise). JSON bodies always need JSON. */
  contentTypes?: readonly string[];
  /** Byte cap for this route's body (413 past it); the app default (1 MiB) otherwise. */
  bodyLimit?: number;
  responses?: Record<number, ResponseSpec>;
  /** Leave this route out of /openapi.json (e.g. HTML pages). */
  hidden?: boolean;
}

/** A route: its shape (schemas) and the handler. */
export interface RouteDefinition<
  P extends TSchema | undefined = undefined,
  Q extends TSchema | undefined = undefined,
  H extends TSchema | undefined = undefined,
  B extends BodySpec | undefined = undefined,
> extends RouteShape<P, Q, H, B> {
  /** Security scheme names, for OpenAPI. */
  security?: string[];
  before?: readonly BeforeHook[];
  handler: (
    ctx: RouteContext<Infer<P>, Infer<Q>, Infer<H>, InferBody<B>>,
  ) => unknown | Promise<unknown>;
}

/** A route as stored by the app, with its type parameters erased. */
export type AnyRoute = RouteDefinition<
  TSchema | undefined,
  TSchema | undefined,
  TSchema | undefined,
  BodySpec | undefined
>;

/** One answered request, as {@link AppOptions.observe} sees it (for metrics). */
export interface RequestObservation {
  method: string;
  /** The route's path template (`/v1/items/:id`); undefined when no route matched (404). */
  route: string | undefined;
  status: number;
  /** From the request reaching the app to its Response (a streamed body may still be flowing). */
  seconds: number;
  env: ServerEnv;
}

/** Options of {@link createApp}. */
export interface AppOptions {
  /** Service name: OpenAPI title and the `name` of log lines. */
  name: string;
  version: string;
  description?: string;
  logger?: Logger;
  /** Default body cap in bytes (1 MiB). */
  bodyLimit?: number;
  /** OpenAPI security schemes, keyed by the names routes list in `security`. */
  securitySchemes?: Record<string, unknown>;
  /** Serve GET /openapi.json (default true). */
  openapi?: boolean;
  /**
   * Called once per answered request with its route template and status (never the raw path):
   * where a server counts its requests. Must not throw.
   */
  observe?: (observation: RequestObservation) => void;
}

/** An HTTP application: register routes, then hand `fetch` to a server or call it in tests. */
export interface App {
  readonly name: string;
  readonly log: Logger;
  route<
    P extends TSchema | undefined = undefined,
    Q extends TSchema | undefined = undefined,
    H extends TSchema | undefined = undefined,
    B extends BodySpec | undefined = undefined,
  >(definition: RouteDefinition<P, Q, H, B>): App;
  /** Answer one request; never throws. */
  fetch(request: Request, env?: ServerEnv): Promise<Response>;
  openapi(): OpenApiDocument;
  routes(): readonly AnyRoute[];
}

/** A JSON response with an explicit status (handlers may also just return a value: 200). */
export function json(data: unknown, init?: ResponseInit): Response {
  // The common case (no headers of the caller's) copies a constant instead of building Headers.
  if (init?.headers === undefined) {
    return textResponse(JSON.stringify(data), init ? { ...init, headers: JSON_TYPE } : JSON_INIT);
  }
  const headers = new Headers(init.headers);
  if (!headers.has("content-type")) headers.set("content-type", "application/json");
  return textResponse(JSON.stringify(data), { ...init, headers });
}

const JSON_TYPE = { "content-type": "application/json" } as const;
const JSON_INIT: ResponseInit = { headers: JSON_TYPE };

/** What a handler returned, as a Response: a Response as is, nothing as 204, anything else as JSON. */
export function toResponse(value: unknown): Response {
  if (value instanceof Response) return value;
  if (value === undefined) return new Response(null, { status: 204 });
  return json(value);
}

/** Query values as `schema` wants them: array properties keep every value, scalars the last. */
export function queryObject(url: URL, schema: TSchema | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const properties = (schema?.properties ?? {}) as Record<string, TSchema>;
  for (const key of new Set(url.searchParams.keys())) {
    const all = url.searchParams.getAll(key);
    out[key] = properties[key]?.type === "array" ? all : all[all.length - 1];
  }
  return out;
}

function decodeParams(raw: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw ?? {})) {
    try {
      out[key] = decodeURIComponent(value);
    } catch {
      throw new ValidationError([
        { loc: ["path", key], msg: "Malformed percent-encoding", type: "value_error" },
      ]);
    }
  }
  return out;
}

function validated<T>(
  schema: TSchema | undefined,
  value: unknown,
  source: "path" | "query" | "header" | "body",
  issues: ValidationIssue[],
): T {
  if (!schema) return value as T;
  const result = validateValue<T>(schema, value, source);
  if (result.ok) return result.value;
  issues.push(...result.issues);
  return value as T;
}

async function readBody(route: AnyRoute, request: Request, defaultLimit: number): Promise<unknown> {
  const spec = route.body;
  if (spec === undefined || spec === "stream") return undefined;
  const limit = route.bodyLimit ?? defaultLimit;
  if (spec === "raw") {
    if (route.contentTypes?.length) requireMediaType(request, route.contentTypes);
    return readBodyWithLimit(request, limit);
  }
  requireMediaType(request, ["application/json"]);
  return parseJsonBody(await readBodyWithLimit(request, limit));
}

const kLogSource: unique symbol = Symbol("request log source");
// The matched route's template, left on the request for the observer and the server span.
const kRoute: unique symbol = Symbol("matched route");
type RoutedRequest = { [kRoute]?: string };
type LazyLogContext = RouteContext & {
  [kLogSource]: { log: Logger; requestId: string; child: Logger | undefined };
};
/** One accessor shared by every request's context (no closure per request). */
const LAZY_LOG: PropertyDescriptor = {
  get(this: LazyLogContext): Logger {
    const source = this[kLogSource];
    if (source.child === undefined)
      source.child = source.log.child({ request_id: source.requestId });
    return source.child;
  },
  enumerable: true,
};

/** The path of a request URL, without its query (which may carry anything a client sent). */
function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start === -1) return "/";
  const query = url.indexOf("?", start);
  return query === -1 ? url.slice(start) : url.slice(start, query);
}

function withRequestId(response: Response, requestId: string): Response {
  try {
    response.headers.set(REQUEST_ID_HEADER, requestId);
    return response;
  } catch {
    // Responses from fetch() have immutable headers: copy them once.
    const copy = new Response(response.body, response);
    copy.headers.set(REQUEST_ID_HEADER, requestId);
    return copy;
  }
}

/**
 * Create an app. Every route's inputs are validated against its TypeBox schemas (422 in
 * FastAPI's shape), errors render through {@link HttpError}, unknown errors are logged and
 * answered 500 without internals, and /openapi.json is generated from the same schemas.
 */
export function createApp(options: AppOptions): App {
  const log = options.logger ?? createLogger({ name: options.name });
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const router = Router<IRequest, [ServerEnv, string]>();
  const registered: AnyRoute[] = [];
  const observe = options.observe;

  const dispatch = async (
    route: AnyRoute,
    request: IRequest,
    env: ServerEnv,
    requestId: string,
  ) => {
    if (observe !== undefined || tracingEnabled()) (request as RoutedRequest)[kRoute] = route.path;
    const url = new URL(request.url);
    const rawParams = decodeParams(request.params);
    const rawQuery = queryObject(url, route.query);
    const rawHeaders = Object.fromEntries(request.headers);
    const ctx: RouteContext = {
      request: request as unknown as Request,
      url,
      params: rawParams,
      query: rawQuery,
      headers: rawHeaders,
      body: undefined,
      requestId,
      log,
      env,
    };
    // Most requests never log: make the request-scoped logger only when a handler asks.
    (ctx as LazyLogContext)[kLogSource] = { log, requestId, child: undefined };
    Object.defineProperty(ctx, "log", LAZY_LOG);
    // Hooks (auth, rate limits) run first: a refused caller learns nothing from validation
    // errors and costs no body read.
    for (const hook of route.before ?? []) await hook(ctx);
    const issues: ValidationIssue[] = [];
    ctx.params = validated(route.params, rawParams, "path", issues);
    ctx.query = validated(route.query, rawQuery, "query", issues);
    ctx.headers = validated(route.headers, rawHeaders, "header", issues);
    if (issues.length) throw new ValidationError(issues);
    const raw = await readBody(route, request as unknown as Request, bodyLimit);
    ctx.body =
      route.body && typeof route.body === "object"
        ? validated(route.body, raw, "body", issues)
        : raw;
    if (issues.length) throw new ValidationError(issues);
    return toResponse(await route.handler(ctx as never));
  };

  const answer = async (request: Request, env: ServerEnv): Promise<Response> => {
    const requestId = requestIdOf(request);
    try {
      const response: Response | undefined = await router.fetch(request, env, requestId);
      if (!response) throw new HttpError(404, "not_found", "Not Found");
      return withRequestId(response, requestId);
    } catch (error) {
      if (error instanceof HttpError) return withRequestId(error.toResponse(), requestId);
      log.error("unhandled error", { request_id: requestId, method: request.method, error });
      const body = {
        detail: "Internal Server Error",
        code: "internal_error",
        request_id: requestId,
      };
      return withRequestId(json(body, { status: 500 }), requestId);
    }
  };

  // A server span per request (continuing the caller's `traceparent`), named by its route
  // template once matched; then the observer. The span ends when the Response is made.
  const instrumented = async (request: Request, env: ServerEnv): Promise<Response> => {
    const started = performance.now();
    const method = request.method;
    let response: Response;
    if (tracingEnabled()) {
      const parent = extractTraceContext(request.headers);
      const span = startSpan(method, {
        kind: "server",
        parent,
        attributes: {
          "http.request.method": method,
          "url.path": pathOf(request.url),
          "service.component": options.name,
        },
      });
      try {
        // Handlers reach it implicitly or, across an await, by requestTraceContext(request).
        const traced = requestSpanContext(request, span, parent);
        response = await runInContext(traced, () => answer(request, env));
      } catch (error) {
        failSpan(span, error);
        span.end();
        throw error;
      }
      const route = (request as RoutedRequest)[kRoute];
      if (route !== undefined) {
        span.setAttribute("http.route", route);
        span.updateName(`${method} ${route}`);
      }
      span.setAttribute("http.response.status_code", response.status);
      if (response.status >= 500) failSpan(span, new Error(`HTTP ${response.status}`));
      span.end();
    } else {
      response = await answer(request, env);
    }
    if (observe !== undefined) {
      try {
        observe({
          method,
          route: (request as RoutedRequest)[kRoute],
          status: response.status,
          seconds: (performance.now() - started) / 1000,
          env,
        });
      } catch (error) {
        log.error("request observer failed", { error });
      }
    }
    return response;
  };

  const app: App = {
    name: options.name,
    log,
    route(definition) {
      const route = definition as unknown as AnyRoute;
      registered.push(route);
      const declared = typeof route.method === "string" ? [route.method] : route.method;
      // A GET route answers HEAD too, with the request as sent (its method stays HEAD, so a
      // signature over HEAD verifies); the adapter sends no body for HEAD.
      const methods =
        declared.includes("GET") && !declared.includes("HEAD") ? [...declared, "HEAD"] : declared;
      for (const method of methods) {
        const register = (
          router as unknown as Record<string, (path: string, handler: unknown) => void>
        )[method.toLowerCase()];
        register?.(route.path, (request: IRequest, env: ServerEnv, requestId: string) =>
          dispatch(route, request, env, requestId),
        );
      }
      return app;
    },
    fetch(request, env = {}) {
      // Off (no observer, no tracing) this is the whole cost of both: one branch.
      if (observe === undefined && !tracingEnabled()) return answer(request, env);
      return instrumented(request, env);
    },
    openapi() {
      return buildOpenApi(options, registered);
    },
    routes() {
      return registered;
    },
  };

  if (options.openapi !== false) {
    let cached: { routes: number; document: OpenApiDocument } | undefined;
    app.route({
      method: "GET",
      path: "/openapi.json",
      hidden: true,
      handler: () => {
        if (cached?.routes !== registered.length)
          cached = { routes: registered.length, document: app.openapi() };
        return cached.document;
      },
    });
  }
  return app;
}
