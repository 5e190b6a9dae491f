import type {
  Database,
  HealthCheck,
  HealthCheckOptions,
  Logger,
  ServerEnv,
  Sql,
} from "@platform/core";
import type { Static, TSchema } from "@sinclair/typebox";
import type { ChallengeSettings } from "./challenge-config.js";

/**
 * What every hook and handler of a challenge can reach: its database, settings, logger and the
 * state `setup` returned. One object per running instance, so nothing lives in module scope.
 */
export interface ChallengeContext<Cfg = unknown, State = unknown> {
  slug: string;
  /** The postgres.js client (same code on PostgreSQL and the embedded PGlite). */
  sql: Sql;
  db: Database;
  /** The author's settings, validated from the environment (`config` schema). */
  config: Cfg;
  /** The SDK's settings (port, token presence, master URL, broker token...). */
  settings: ChallengeSettings;
  log: Logger;
  /** What `setup` returned (its type is inferred from `setup`); undefined without a `setup`. */
  state: State;
}

/** What `setup` gets: the challenge context before it has a state, and where to register cleanup. */
export interface SetupContext<Cfg = unknown> extends Omit<ChallengeContext<Cfg>, "state"> {
  /**
   * Run `cleanup` when the challenge closes, before its database closes. Cleanups run in the
   * reverse order of registration (the last thing started stops first), also when `setup`
   * throws after registering some.
   * @example const stop = new AbortController(); onClose(() => stop.abort());
   */
  onClose(cleanup: () => void | Promise<void>): void;
  /**
   * Make GET /readyz depend on one more thing (the database is always checked): `check`
   * resolves while it is usable and throws when not; it fails past `timeoutMs` (2 s).
   * @example addReadinessCheck("docker", async () => { await docker.ping(); });
   */
  addReadinessCheck(name: string, check: HealthCheck, options?: HealthCheckOptions): void;
}

/** A request before its inputs are validated: what an `auth` hook and a `bearer` check see. */
export interface RequestInfo<Cfg = unknown, State = unknown> extends ChallengeContext<Cfg, State> {
  request: Request;
  url: URL;
  requestId: string;
  env: ServerEnv;
  /**
   * The path's parameters as matched, NOT validated yet (the handler's `params` are): for a
   * `bearer` check that compares the id a token names with the path's.
   */
  pathParams: Readonly<Record<string, string>>;
}

/** A handler's context: the validated inputs of the request plus the challenge context. */
export interface RequestContext<
  P = unknown,
  Q = unknown,
  H = unknown,
  B = unknown,
  Cfg = unknown,
  State = unknown,
> extends RequestInfo<Cfg, State> {
  params: P;
  query: Q;
  headers: H;
  body: B;
  /**
   * The exact bytes of the request body, when the route declares one (`body`): for checks on
   * the bytes themselves, such as byte-exact canonical JSON or a signature over the body.
   */
  rawBody?: Uint8Array;
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

/**
 * Who sent a submission, and which way: `signed` (the miner signed the request itself; nonce and
 * hash always set) or `bridge` (the master verified the miner's upload and forwarded it).
 */
export type SubmissionMiner =
  | (VerifiedMiner & { via: "signed" })
  | (BridgeMiner & { via: "bridge" });

/** Context of a signed route: who signed, and the exact bytes they signed. */
export interface SignedContext<
  P = unknown,
  Q = unknown,
  H = unknown,
  B = unknown,
  Cfg = unknown,
  State = unknown,
> extends RequestContext<P, Q, H, B, Cfg, State> {
  miner: VerifiedMiner;
  rawBody: Uint8Array;
}

/** Context of a bridge route: the verified miner and the upload's file name. */
export interface BridgeContext<
  P = unknown,
  Q = unknown,
  H = unknown,
  B = unknown,
  Cfg = unknown,
  State = unknown,
> extends RequestContext<P, Q, H, B, Cfg, State> {
  miner: BridgeMiner;
  /** X-Submission-Filename (a plain file name), or null when the master sent none. */
  filename: string | null;
}

/**
 * A submission's body: validated JSON (`mediaType` "application/json") when the route has a
 * `body` schema, or, for a media type listed in `raw`, no parsed body at all (`body` undefined:
 * read `rawBody`). Narrow on `ctx.body === undefined` or on `ctx.mediaType`.
 */
export type SubmissionBody<B, R extends readonly string[]> =
  | (B extends TSchema ? { body: Static<B>; mediaType: "application/json" } : never)
  | (R extends readonly [] ? never : { body: undefined; mediaType: R[number] });

/** Context of a `router.submission` handler, whichever way the submission came in. */
export type SubmissionContext<
  P = unknown,
  Q = unknown,
  H = unknown,
  B extends TSchema | undefined = TSchema | undefined,
  R extends readonly string[] = readonly string[],
  Cfg = unknown,
  State = unknown,
> = RequestInfo<Cfg, State> & {
  params: P;
  query: Q;
  headers: H;
  miner: SubmissionMiner;
  /** The bridge's X-Submission-Filename (a plain file name); null when signed or not sent. */
  filename: string | null;
  /** The exact bytes received (for a signed submission: the bytes that were signed). */
  rawBody: Uint8Array;
} & SubmissionBody<B, R>;

/** Extra check after the route's built-in authentication; throw an HttpError to refuse. */
export type AuthHook<Cfg = unknown, State = unknown> = (
  request: RequestInfo<Cfg, State>,
) => void | Promise<void>;

/**
 * What a `bearer` check answers: the record the token opens (an object: accepted, and the
 * handler gets it as `ctx.bearer`), `true` (accepted, nothing to hand over), or `false`, `null`
 * or `undefined` (refused: 401 with the route's code).
 */
export type BearerAnswer = object | boolean | null | undefined;

/**
 * A route's own bearer check (a run-, assignment- or attempt-scoped token): resolve the
 * presented `Authorization: Bearer` token to the record it opens, or refuse. It runs before the
 * body is read. Throw an `HttpError` to refuse with another status and code (410 for a token
 * whose record was revoked, 403 for one that may not do this). Check capability tokens with
 * `verifyCapabilityToken`, stored hashes with `tokenMatchesHash`, secrets with `secretsEqual`.
 * @example
 * const runBearer: BearerCheck<Cfg, State, Run> = async (token, { sql, pathParams }) => {
 *   const [run] = await sql<Run[]>`select * from runs where id = ${pathParams.run_id}`;
 *   return run && tokenMatchesHash(token, run.token_hash) ? run : null;
 * };
 */
export type BearerCheck<Cfg = unknown, State = unknown, R extends BearerAnswer = BearerAnswer> = (
  token: string,
  request: RequestInfo<Cfg, State>,
) => R | Promise<R>;

/** What the handler's `ctx.bearer` holds: what the route's `bearer` check answered when it accepted. */
export type BearerRecord<R> = Exclude<Awaited<R>, false | null | undefined>;

/** How a route answers a refused bearer (false, null or undefined from the check). */
export interface BearerRefusal {
  /** The 401's code (default `invalid_token` on a public route, `invalid_internal_token` on an internal one). */
  code?: string;
  /** The 401's message for a token that was refused (a missing one is always "Missing bearer token"). */
  message?: string;
}
