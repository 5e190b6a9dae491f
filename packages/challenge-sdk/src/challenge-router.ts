import type { Database, HttpMethod, Logger, RouteShape, ServerEnv, Sql } from "@platform/core";
import type { Static, TSchema } from "@sinclair/typebox";
import type { ChallengeSettings } from "./challenge-config.js";
import { isBlockedProxyPath, isInternalPath } from "./proxy-contract.js";
import { checkRateLimitRule, type RateLimitRule } from "./rate-limit.js";

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

/** What every hook and handler of a challenge can reach: its database, config and logger. */
export interface ChallengeContext<Cfg = unknown> {
  slug: string;
  /** The postgres.js client (same code on PostgreSQL and the embedded PGlite). */
  sql: Sql;
  db: Database;
  /** The author's settings, validated from the environment (`config` schema). */
  config: Cfg;
  /** The SDK's settings (port, token presence, master URL, broker token...). */
  settings: ChallengeSettings;
  log: Logger;
}

/** A request before its inputs are validated: what an `auth` hook sees. */
export interface RequestInfo<Cfg = unknown> extends ChallengeContext<Cfg> {
  request: Request;
  url: URL;
  requestId: string;
  env: ServerEnv;
}

/** A handler's context: the validated inputs of the request plus the challenge context. */
export interface RequestContext<P = unknown, Q = unknown, H = unknown, B = unknown, Cfg = unknown>
  extends RequestInfo<Cfg> {
  params: P;
  query: Q;
  headers: H;
  body: B;
}

/** The miner a signed route verified: its canonical ss58 hotkey and the spent nonce. */
export interface VerifiedMiner {
  hotkey: string;
  nonce: string;
  /** sha256 hex of the canonical signed message: record it to say which request you acted on. */
  requestHash: string;
  /** The X-Timestamp it signed (unix seconds). */
  timestamp: number;
}

/** The miner the master verified for a bridge request (nonce and hash when the master sent them). */
export interface BridgeMiner {
  hotkey: string;
  nonce: string | null;
  requestHash: string | null;
}

/** Context of a signed route: who signed, and the exact bytes they signed. */
export interface SignedContext<P = unknown, Q = unknown, H = unknown, B = unknown, Cfg = unknown>
  extends RequestContext<P, Q, H, B, Cfg> {
  miner: VerifiedMiner;
  rawBody: Uint8Array;
}

/** Context of a bridge route: the verified miner and the upload's file name. */
export interface BridgeContext<P = unknown, Q = unknown, H = unknown, B = unknown, Cfg = unknown>
  extends RequestContext<P, Q, H, B, Cfg> {
  miner: BridgeMiner;
  /** X-Submission-Filename (a plain file name), or null when the master sent none. */
  filename: string | null;
}

/** Extra check after the route's built-in authentication; throw an HttpError to refuse. */
export type AuthHook<Cfg = unknown> = (request: RequestInfo<Cfg>) => void | Promise<void>;

/** What every route kind declares: where it lives, what it accepts, how it is documented. */
export type RouteOptions<P, Q, H, B> = RouteShape<P, Q, H, B>;

/** Identity checks of signed and bridge routes. */
export interface IdentityOptions<Cfg> {
  /** Is this hotkey allowed at all (e.g. registered on the subnet)? false -> 403 `hotkey_not_registered`. */
  registered?: (hotkey: string, ctx: ChallengeContext<Cfg>) => boolean | Promise<boolean>;
  /** Per-hotkey limit stored in the database; over it -> 429 `rate_limited` with Retry-After. */
  rateLimit?: RateLimitRule;
}

type Handler<C> = (ctx: C) => unknown | Promise<unknown>;

/** A public route: no credential (an `auth` hook may add one, e.g. a run-scoped bearer). */
export interface PublicRoute<P, Q, H, B, Cfg> extends RouteOptions<P, Q, H, B> {
  auth?: AuthHook<Cfg>;
  handler: Handler<RequestContext<Infer<P>, Infer<Q>, Infer<H>, InferBody<B>, Cfg>>;
}

/** A miner-signed route: verified over the exact bytes, then its nonce is spent, then parsed. */
export interface SignedRoute<P, Q, H, B, Cfg>
  extends RouteOptions<P, Q, H, B>,
    IdentityOptions<Cfg> {
  auth?: AuthHook<Cfg>;
  handler: Handler<SignedContext<Infer<P>, Infer<Q>, Infer<H>, InferBody<B>, Cfg>>;
}

/** A bridge route: the master's verified upload, behind the challenge token and slug. */
export interface BridgeRoute<P, Q, H, B, Cfg>
  extends RouteOptions<P, Q, H, B>,
    IdentityOptions<Cfg> {
  /** Also spend the forwarded X-Core-Verified-Nonce here, so one upload is never stored twice (default true). */
  reserveNonce?: boolean;
  auth?: AuthHook<Cfg>;
  handler: Handler<BridgeContext<Infer<P>, Infer<Q>, Infer<H>, InferBody<B>, Cfg>>;
}

/** An internal route: the challenge token plus the slug header. */
export interface InternalRoute<P, Q, H, B, Cfg> extends RouteOptions<P, Q, H, B> {
  /**
   * Check the bearer yourself instead of comparing it with CHALLENGE_TOKEN (e.g. a per-attempt
   * token); the slug header is still required. Compare secrets with `secretsEqual`.
   */
  bearer?: (token: string, request: RequestInfo<Cfg>) => boolean | Promise<boolean>;
  auth?: AuthHook<Cfg>;
  handler: Handler<RequestContext<Infer<P>, Infer<Q>, Infer<H>, InferBody<B>, Cfg>>;
}

type S = TSchema | undefined;
type BS = ChallengeBodySpec | undefined;

/** Where a challenge declares its routes; `defineChallenge({ routes: (router) => ... })`. */
export interface ChallengeRouter<Cfg = unknown> {
  /** A route anyone may call (through the proxy). Refused under /internal, /health, /version. */
  public<
    P extends S = undefined,
    Q extends S = undefined,
    H extends S = undefined,
    B extends BS = undefined,
  >(route: PublicRoute<P, Q, H, B, Cfg>): ChallengeRouter<Cfg>;
  /** A route a miner signs (X-Hotkey, X-Signature, X-Nonce, X-Timestamp); `ctx.miner` is who. */
  signed<
    P extends S = undefined,
    Q extends S = undefined,
    H extends S = undefined,
    B extends BS = undefined,
  >(route: SignedRoute<P, Q, H, B, Cfg>): ChallengeRouter<Cfg>;
  /** A route the master calls with a miner it verified (must live under /internal). */
  bridge<
    P extends S = undefined,
    Q extends S = undefined,
    H extends S = undefined,
    B extends BS = undefined,
  >(route: BridgeRoute<P, Q, H, B, Cfg>): ChallengeRouter<Cfg>;
  /** A route for the master and workers, behind the challenge token (must live under /internal). */
  internal<
    P extends S = undefined,
    Q extends S = undefined,
    H extends S = undefined,
    B extends BS = undefined,
  >(route: InternalRoute<P, Q, H, B, Cfg>): ChallengeRouter<Cfg>;
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
  bearer?: InternalRoute<S, S, S, BS, unknown>["bearer"];
  handler: (ctx: never) => unknown;
}

/** A route as `challenge.routes()` lists it. */
export interface ChallengeRouteInfo {
  access: RouteAccess | "service";
  methods: readonly HttpMethod[];
  path: string;
  /** How the body is read: validated JSON, raw bytes, or none. */
  body: "json" | "raw" | "none";
  contentTypes?: readonly string[] | undefined;
  hidden: boolean;
}

function fail(access: RouteAccess, path: string, reason: string): never {
  throw new TypeError(`router.${access}("${path}"): ${reason}`);
}

/** Checks a route against the proxy contract and its own options; throws a TypeError if unusable. */
export function checkRoute(access: RouteAccess, route: RouteOptions<S, S, S, BS>): void {
  const { path } = route;
  if (typeof path !== "string" || !path.startsWith("/")) fail(access, path, "a path starts with /");
  if (/[?#\s]/.test(path)) fail(access, path, "a path has no query, fragment or whitespace");
  if (access === "public" || access === "signed") {
    if (isInternalPath(path)) {
      fail(
        access,
        path,
        "/internal is never forwarded by the proxy; use router.internal or router.bridge",
      );
    }
    if (isBlockedProxyPath(path)) {
      fail(
        access,
        path,
        "the master's proxy blocks this path (health, version, benchmark executions), so the public could never reach it",
      );
    }
  } else if (!isInternalPath(path)) {
    fail(
      access,
      path,
      "internal and bridge routes live under /internal (the proxy never forwards it)",
    );
  }
  const methods = typeof route.method === "string" ? [route.method] : route.method;
  if (!Array.isArray(methods) || methods.length === 0)
    fail(access, path, "give at least one method");
  if (
    route.bodyLimit !== undefined &&
    (!Number.isSafeInteger(route.bodyLimit) || route.bodyLimit < 0)
  ) {
    fail(access, path, "bodyLimit must be a whole number of bytes");
  }
  if (route.body !== undefined && route.body !== "raw" && typeof route.body !== "object") {
    fail(access, path, 'body is a TypeBox schema or "raw"');
  }
}

/**
 * Creates a router that records every route into `routes` after checking it; `reserved` holds
 * the `METHOD path` keys of the SDK's own routes, which an author cannot shadow.
 */
export function createRouter<Cfg>(
  routes: RegisteredRoute[],
  reserved: readonly string[] = [],
): ChallengeRouter<Cfg> {
  const seen = new Set(reserved);
  const add = (access: RouteAccess, route: Record<string, unknown>) => {
    const options = route as unknown as RouteOptions<S, S, S, BS>;
    checkRoute(access, options);
    if (typeof route["handler"] !== "function")
      fail(access, options.path, "handler must be a function");
    const rateLimit = route["rateLimit"] as RateLimitRule | undefined;
    if (rateLimit) checkRateLimitRule(rateLimit);
    const methods = typeof options.method === "string" ? [options.method] : [...options.method];
    const keys = methods.map((method) => `${method} ${options.path}`);
    const taken = keys.find((key) => seen.has(key));
    if (taken) fail(access, options.path, `${taken} is already registered`);
    for (const key of keys) seen.add(key);
    routes.push({
      access,
      methods,
      path: options.path,
      options,
      auth: route["auth"] as AuthHook | undefined,
      registered: route["registered"] as RegisteredRoute["registered"],
      rateLimit,
      reserveNonce: route["reserveNonce"] as boolean | undefined,
      bearer: route["bearer"] as RegisteredRoute["bearer"],
      handler: route["handler"] as RegisteredRoute["handler"],
    });
  };
  const router: ChallengeRouter<Cfg> = {
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
  };
  return router;
}
