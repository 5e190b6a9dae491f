import type { HttpMethod, RouteShape } from "@platform/core";
import type { Static, TSchema } from "@sinclair/typebox";
import {
  type CheckedArchive,
  checkArchive,
  type SubmissionArchive,
} from "./bundle/submission-archive.js";
import { isBlockedProxyPath, isInternalPath } from "./proxy-contract/proxy-contract.js";
import { checkRateLimitRule, type RateLimitRule } from "./rate-limit.js";
import type {
  AuthHook,
  BearerAnswer,
  BearerCheck,
  BearerRecord,
  BearerRefusal,
  BridgeContext,
  ChallengeContext,
  RequestContext,
  SignedContext,
  SubmissionContext,
} from "./route-context.js";

/**
 * Who may call a route. `public`: anyone, through the proxy at `/challenges/{slug}/...`;
 * `signed`: a miner, proven by its sr25519 signature; `bridge`: the master, forwarding a miner
 * it verified; `internal`: the master or a worker, with the challenge token.
 */
export type RouteAccess = "public" | "signed" | "bridge" | "internal";

/** A route body: a TypeBox schema (JSON, validated) or "raw" (the exact bytes). */
export type ChallengeBodySpec = TSchema | "raw";

type Infer<S> = S extends TSchema ? Static<S> : Record<string, never>;
type InferBody<B> = B extends TSchema ? Static<B> : B extends "raw" ? Uint8Array : undefined;

/** What every route kind declares: where it lives, what it accepts, how it is documented. */
export type RouteOptions<P, Q, H, B> = RouteShape<P, Q, H, B>;

/** Identity checks of signed, bridge and submission routes. */
export interface IdentityOptions<Cfg, State = unknown> {
  /** Is this hotkey allowed at all (e.g. registered on the subnet)? false -> 403 `hotkey_not_registered`. */
  registered?: (hotkey: string, ctx: ChallengeContext<Cfg, State>) => boolean | Promise<boolean>;
  /** Per-hotkey limit stored in the database; over it -> 429 `rate_limited` with Retry-After. */
  rateLimit?: RateLimitRule;
}

type Handler<C> = (ctx: C) => unknown | Promise<unknown>;

/** `ctx.bearer` of a route with a `bearer` check (R: what the check answers); nothing without one. */
type WithBearer<R> = [R] extends [undefined] ? unknown : { bearer: BearerRecord<R> };

/** The context of a public or internal handler: its validated inputs and its bearer's record. */
type RouteHandlerContext<P, Q, H, B, Cfg, State, R> = RequestContext<
  Infer<P>,
  Infer<Q>,
  Infer<H>,
  InferBody<B>,
  Cfg,
  State
> &
  WithBearer<R>;

/** A public route: no credential, or its own `bearer` (a run- or assignment-scoped token). */
export interface PublicRoute<P, Q, H, B, Cfg, State, R extends BearerAnswer = undefined>
  extends RouteOptions<P, Q, H, B> {
  /**
   * Require `Authorization: Bearer` and resolve it to what it opens (`ctx.bearer`): missing or
   * refused -> 401 `invalid_token` (or `bearerRefusal`'s code), before the body is read.
   */
  bearer?: BearerCheck<Cfg, State, R>;
  /** The 401's code and message when `bearer` refuses. */
  bearerRefusal?: BearerRefusal;
  auth?: AuthHook<Cfg, State>;
  handler: Handler<RouteHandlerContext<P, Q, H, B, Cfg, State, R>>;
}

/** A miner-signed route: verified over the exact bytes, then its nonce is spent, then parsed. */
export interface SignedRoute<P, Q, H, B, Cfg, State>
  extends RouteOptions<P, Q, H, B>,
    IdentityOptions<Cfg, State> {
  auth?: AuthHook<Cfg, State>;
  handler: Handler<SignedContext<Infer<P>, Infer<Q>, Infer<H>, InferBody<B>, Cfg, State>>;
}

/** A bridge route: the master's verified upload, behind the challenge token and slug. */
export interface BridgeRoute<P, Q, H, B, Cfg, State>
  extends RouteOptions<P, Q, H, B>,
    IdentityOptions<Cfg, State> {
  /** Also spend the forwarded X-Core-Verified-Nonce here, so one upload is never stored twice (default true). */
  reserveNonce?: boolean;
  auth?: AuthHook<Cfg, State>;
  handler: Handler<BridgeContext<Infer<P>, Infer<Q>, Infer<H>, InferBody<B>, Cfg, State>>;
}

/** An internal route: the challenge token plus the slug header. */
export interface InternalRoute<P, Q, H, B, Cfg, State, R extends BearerAnswer = undefined>
  extends RouteOptions<P, Q, H, B> {
  /**
   * Judge the bearer yourself instead of comparing it with CHALLENGE_TOKEN (e.g. a per-attempt
   * token), resolving it to what it opens (`ctx.bearer`); the slug header is still required.
   * Refused -> 401 `invalid_internal_token` (or `bearerRefusal`'s code).
   */
  bearer?: BearerCheck<Cfg, State, R>;
  /** The 401's code and message when `bearer` refuses. */
  bearerRefusal?: BearerRefusal;
  /**
   * `"required"` (default): a slug header naming this challenge must be sent (403
   * `challenge_slug_mismatch`). `"if-sent"`: the bearer alone is enough, for a route a cron or a
   * worker calls without the master's headers; a slug header that is sent must still match.
   */
  slugHeader?: SlugHeaderRule;
  auth?: AuthHook<Cfg, State>;
  handler: Handler<RouteHandlerContext<P, Q, H, B, Cfg, State, R>>;
}

/** Whether an internal route needs a slug header beside its bearer (see `InternalRoute.slugHeader`). */
export type SlugHeaderRule = "required" | "if-sent";

/** Where the master forwards a verified upload unless a submission route says otherwise. */
export const DEFAULT_BRIDGE_PATH = "/internal/v1/bridge/submissions";

/**
 * A submission: ONE declaration, two ways in. A miner signs the request to `path`, or uploads
 * through the master, which verifies it and forwards it to `bridgePath`. One handler, one
 * `registered` check and one rate-limit count for both.
 */
export interface SubmissionRoute<
  P,
  Q,
  H,
  B extends TSchema | undefined,
  R extends readonly string[],
  Cfg,
  State,
  A extends SubmissionArchive | undefined = undefined,
> extends Omit<RouteOptions<P, Q, H, B>, "method" | "contentTypes">,
    IdentityOptions<Cfg, State> {
  /** POST by default. */
  method?: "POST" | "PUT";
  /** Where the master's bridge posts the upload (under /internal); "/internal/v1/bridge/submissions" by default. */
  bridgePath?: string;
  /**
   * Media types taken as raw bytes instead of JSON, either way in (e.g. ["application/zip"]):
   * `ctx.body` is then undefined and the handler reads `ctx.rawBody`.
   */
  raw?: R;
  /**
   * The archive the submission carries (base64 in `archive.field` of the JSON body, or the raw
   * bytes of a `raw` media type): decoded, size-checked and read with `readZip` under its limits
   * after the credential and the body's validation, before the handler, which gets it as
   * `ctx.archive`. Refusals are 400/413 with the archive's codes.
   */
  archive?: A;
  auth?: AuthHook<Cfg, State>;
  handler: Handler<
    SubmissionContext<Infer<P>, Infer<Q>, Infer<H>, B, R, Cfg, State> &
      (A extends SubmissionArchive ? { archive: CheckedArchive } : unknown)
  >;
}

type S = TSchema | undefined;
type BS = ChallengeBodySpec | undefined;

/** Where a challenge declares its routes; `defineChallenge({ routes: (router) => ... })`. */
export interface ChallengeRouter<Cfg = unknown, State = unknown> {
  /**
   * A route anyone may call (through the proxy). Refused under /internal, /health, /livez,
   * /readyz, /metrics and /version (the proxy blocks them).
   */
  public<
    P extends S = undefined,
    Q extends S = undefined,
    H extends S = undefined,
    B extends BS = undefined,
    R extends BearerAnswer = undefined,
  >(route: PublicRoute<P, Q, H, B, Cfg, State, R>): ChallengeRouter<Cfg, State>;
  /** A route a miner signs (X-Hotkey, X-Signature, X-Nonce, X-Timestamp); `ctx.miner` is who. */
  signed<
    P extends S = undefined,
    Q extends S = undefined,
    H extends S = undefined,
    B extends BS = undefined,
  >(route: SignedRoute<P, Q, H, B, Cfg, State>): ChallengeRouter<Cfg, State>;
  /** A route the master calls with a miner it verified (must live under /internal). */
  bridge<
    P extends S = undefined,
    Q extends S = undefined,
    H extends S = undefined,
    B extends BS = undefined,
  >(route: BridgeRoute<P, Q, H, B, Cfg, State>): ChallengeRouter<Cfg, State>;
  /** A route for the master and workers, behind the challenge token (must live under /internal). */
  internal<
    P extends S = undefined,
    Q extends S = undefined,
    H extends S = undefined,
    B extends BS = undefined,
    R extends BearerAnswer = undefined,
  >(route: InternalRoute<P, Q, H, B, Cfg, State, R>): ChallengeRouter<Cfg, State>;
  /**
   * A submission route: signed by the miner at `path`, and bridged by the master at `bridgePath`
   * (default "/internal/v1/bridge/submissions"), both into one handler; `ctx.miner.via` says which.
   */
  submission<
    P extends S = undefined,
    Q extends S = undefined,
    H extends S = undefined,
    B extends S = undefined,
    const R extends readonly string[] = readonly [],
    A extends SubmissionArchive | undefined = undefined,
  >(route: SubmissionRoute<P, Q, H, B, R, Cfg, State, A>): ChallengeRouter<Cfg, State>;
}

/** A registered route with its types erased (what the pipeline runs). */
export interface RegisteredRoute {
  access: RouteAccess;
  methods: readonly HttpMethod[];
  path: string;
  options: RouteOptions<S, S, S, BS>;
  auth?: AuthHook | undefined;
  registered?: IdentityOptions<unknown>["registered"];
  rateLimit?: RateLimitRule | undefined;
  reserveNonce?: boolean | undefined;
  bearer?: BearerCheck | undefined;
  bearerRefusal?: BearerRefusal | undefined;
  slugHeader?: SlugHeaderRule | undefined;
  /**
   * Set on both halves of a `router.submission`: the media types it takes as raw bytes, and
   * the archive it carries.
   */
  submission?: { raw: readonly string[]; archive?: SubmissionArchive | undefined } | undefined;
  handler: (ctx: never) => unknown;
}

/** A route as `challenge.routes()` lists it. */
export interface ChallengeRouteInfo {
  access: RouteAccess | "service";
  methods: readonly HttpMethod[];
  path: string;
  /** How the body is read: validated JSON, raw bytes, or none. */
  body: "json" | "raw" | "none";
  /** Media types taken as raw bytes (beside JSON, on a submission route with a schema). */
  contentTypes?: readonly string[] | undefined;
  /**
   * The credential the route checks before it reads the body: a miner's `signature`, the
   * `challenge-token` (internal and bridge), the route's own `bearer`, or `none`.
   */
  credential: "none" | "signature" | "challenge-token" | "bearer";
  hidden: boolean;
}

type Where = RouteAccess | "submission";

function fail(access: Where, path: string, reason: string): never {
  throw new TypeError(`router.${access}("${path}"): ${reason}`);
}

/** Checks a route against the proxy contract and its own options; throws a TypeError if unusable. */
export function checkRoute(
  access: RouteAccess,
  route: RouteOptions<S, S, S, BS>,
  where: Where = access,
): void {
  const { path } = route;
  if (typeof path !== "string" || !path.startsWith("/")) fail(where, path, "a path starts with /");
  if (/[?#\s]/.test(path)) fail(where, path, "a path has no query, fragment or whitespace");
  if (access === "public" || access === "signed") {
    if (isInternalPath(path)) {
      fail(
        where,
        path,
        "/internal is never forwarded by the proxy; use router.internal or router.bridge",
      );
    }
    if (isBlockedProxyPath(path)) {
      fail(
        where,
        path,
        "the master's proxy blocks this path (health, livez, readyz, metrics, version, benchmark executions), so the public could never reach it",
      );
    }
  } else if (!isInternalPath(path)) {
    fail(
      where,
      path,
      "internal and bridge routes live under /internal (the proxy never forwards it)",
    );
  }
  const methods = typeof route.method === "string" ? [route.method] : route.method;
  if (!Array.isArray(methods) || methods.length === 0)
    fail(where, path, "give at least one method");
  if (
    route.bodyLimit !== undefined &&
    (!Number.isSafeInteger(route.bodyLimit) || route.bodyLimit < 0)
  ) {
    fail(where, path, "bodyLimit must be a whole number of bytes");
  }
  if (route.body !== undefined && route.body !== "raw" && typeof route.body !== "object") {
    fail(where, path, 'body is a TypeBox schema or "raw"');
  }
}

// An error code is a stable snake_case name clients can act on.
const ERROR_CODE = /^[a-z][a-z0-9_]{0,63}$/;

/** `bearerRefusal`: a snake_case code and a short message, both optional. */
function checkBearerRefusal(where: Where, path: string, refusal: unknown): void {
  if (typeof refusal !== "object" || refusal === null) {
    fail(where, path, "bearerRefusal is { code?, message? }");
  }
  const { code, message, ...rest } = refusal as Record<string, unknown>;
  if (Object.keys(rest).length > 0) fail(where, path, "bearerRefusal is { code?, message? }");
  if (code !== undefined && (typeof code !== "string" || !ERROR_CODE.test(code))) {
    fail(where, path, "bearerRefusal.code is a snake_case error code, e.g. invalid_session");
  }
  if (message !== undefined && (typeof message !== "string" || message.length > 200)) {
    fail(where, path, "bearerRefusal.message is a string of at most 200 characters");
  }
}

const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/;

/** The `raw` list of a submission: lower-case media types, never JSON beside a JSON schema. */
function checkRawTypes(path: string, raw: unknown, hasSchema: boolean): readonly string[] {
  if (raw === undefined) return [];
  if (
    !Array.isArray(raw) ||
    raw.some((type) => typeof type !== "string" || !MEDIA_TYPE.test(type))
  ) {
    fail("submission", path, 'raw is a list of lower-case media types, e.g. ["application/zip"]');
  }
  if (hasSchema && raw.includes("application/json")) {
    fail("submission", path, "application/json is the body schema's; raw lists other media types");
  }
  return [...raw] as string[];
}

/**
 * Creates a router that records every route into `routes` after checking it; `reserved` holds
 * the `METHOD path` keys of the SDK's own routes, which an author cannot shadow.
 */
export function createRouter<Cfg, State>(
  routes: RegisteredRoute[],
  reserved: readonly string[] = [],
): ChallengeRouter<Cfg, State> {
  const seen = new Set(reserved);
  const claim = (where: Where, path: string, methods: readonly HttpMethod[]) => {
    const keys = methods.map((method) => `${method} ${path}`);
    const taken = keys.find((key) => seen.has(key));
    if (taken) fail(where, path, `${taken} is already registered`);
    return () => {
      for (const key of keys) seen.add(key);
    };
  };
  const check = (where: Where, route: Record<string, unknown>, path: string) => {
    if (typeof route["handler"] !== "function") fail(where, path, "handler must be a function");
    const rateLimit = route["rateLimit"] as RateLimitRule | undefined;
    if (rateLimit) checkRateLimitRule(rateLimit);
    const bearer = route["bearer"];
    if (bearer !== undefined && typeof bearer !== "function") {
      fail(where, path, "bearer must be a function (token, request) => record | boolean | null");
    }
    const refusal = route["bearerRefusal"];
    if (refusal !== undefined) {
      if (bearer === undefined) fail(where, path, "bearerRefusal belongs beside a bearer check");
      checkBearerRefusal(where, path, refusal);
    }
  };
  const entry = (
    access: RouteAccess,
    options: RouteOptions<S, S, S, BS>,
    methods: readonly HttpMethod[],
    route: Record<string, unknown>,
  ): RegisteredRoute => ({
    access,
    methods,
    path: options.path,
    options,
    auth: route["auth"] as AuthHook | undefined,
    registered: route["registered"] as RegisteredRoute["registered"],
    rateLimit: route["rateLimit"] as RateLimitRule | undefined,
    reserveNonce: route["reserveNonce"] as boolean | undefined,
    bearer: route["bearer"] as BearerCheck | undefined,
    bearerRefusal: route["bearerRefusal"] as BearerRefusal | undefined,
    slugHeader: route["slugHeader"] as SlugHeaderRule | undefined,
    handler: route["handler"] as RegisteredRoute["handler"],
  });

  const add = (access: RouteAccess, route: Record<string, unknown>) => {
    const options = route as unknown as RouteOptions<S, S, S, BS>;
    checkRoute(access, options);
    check(access, route, options.path);
    if (route["bearer"] !== undefined && access !== "public" && access !== "internal") {
      fail(access, options.path, "a bearer check belongs on a public or internal route");
    }
    const slugHeader = route["slugHeader"];
    if (slugHeader !== undefined && access !== "internal") {
      fail(access, options.path, "slugHeader belongs on an internal route");
    }
    if (slugHeader !== undefined && slugHeader !== "required" && slugHeader !== "if-sent") {
      fail(access, options.path, 'slugHeader is "required" or "if-sent"');
    }
    const methods = typeof options.method === "string" ? [options.method] : [...options.method];
    claim(access, options.path, methods)();
    routes.push(entry(access, options, methods, route));
  };

  const addSubmission = (route: Record<string, unknown>) => {
    const path = route["path"] as string;
    const bridgePath = (route["bridgePath"] as string | undefined) ?? DEFAULT_BRIDGE_PATH;
    const method = (route["method"] as HttpMethod | undefined) ?? "POST";
    if (method !== "POST" && method !== "PUT") fail("submission", path, "method is POST or PUT");
    const body = route["body"] as TSchema | undefined;
    if (body !== undefined && (typeof body !== "object" || body === null)) {
      fail("submission", path, 'body is a TypeBox schema (use `raw` for bytes, not body: "raw")');
    }
    if (route["contentTypes"] !== undefined) {
      fail("submission", path, "list raw media types in `raw`, not contentTypes");
    }
    if (
      route["bearer"] !== undefined ||
      route["bearerRefusal"] !== undefined ||
      route["reserveNonce"] !== undefined
    ) {
      fail("submission", path, "a submission is signed or bridged: no bearer or reserveNonce");
    }
    const raw = checkRawTypes(path, route["raw"], body !== undefined);
    if (body === undefined && raw.length === 0) {
      fail("submission", path, "give a JSON `body` schema, `raw` media types, or both");
    }
    const archive = route["archive"] as SubmissionArchive | undefined;
    if (archive !== undefined) {
      try {
        checkArchive(archive);
      } catch (error) {
        fail("submission", path, (error as Error).message);
      }
      if (archive.field === undefined && raw.length === 0) {
        fail("submission", path, "an archive arrives in `archive.field` of the body or as `raw`");
      }
      // A JSON body must say where its archive is; only raw bytes can be the archive itself.
      if ((archive.field !== undefined) !== (body !== undefined)) {
        fail("submission", path, "archive.field names the JSON `body` field holding the archive");
      }
    }
    const signed = { ...route, method, path } as unknown as RouteOptions<S, S, S, BS>;
    const bridged = { ...route, method, path: bridgePath } as unknown as RouteOptions<S, S, S, BS>;
    checkRoute("signed", signed, "submission");
    checkRoute("bridge", bridged, "submission");
    check("submission", route, path);
    const claimSigned = claim("submission", path, [method]);
    const claimBridged = claim("submission", bridgePath, [method]);
    claimSigned();
    claimBridged();
    // One count for both ways in: the bucket defaults to the signed half's `METHOD path`.
    const limit = route["rateLimit"] as RateLimitRule | undefined;
    const shared = limit ? { ...limit, bucket: limit.bucket ?? `${method} ${path}` } : undefined;
    const submission = { raw, archive };
    for (const [access, options] of [
      ["signed", signed],
      ["bridge", bridged],
    ] as const) {
      routes.push({ ...entry(access, options, [method], route), rateLimit: shared, submission });
    }
  };

  const router: ChallengeRouter<Cfg, State> = {
    public(route) {
      add("public", route as never);
      return router;
    },
    signed(route) {
      add("signed", route as never);
      return router;
    },
    bridge(route) {
      add("bridge", route as never);
      return router;
    },
    internal(route) {
      add("internal", route as never);
      return router;
    },
    submission(route) {
      addSubmission(route as never);
      return router;
    },
  };
  return router;
}
