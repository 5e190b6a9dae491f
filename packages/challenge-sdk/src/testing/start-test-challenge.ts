import { randomBytes } from "node:crypto";
import type { Challenge, ChallengeInstance } from "@platform/challenge-sdk";
import { PLATFORM_HEADERS, proxyPathPrefix } from "@platform/challenge-sdk/proxy-contract";
import {
  type Backend,
  type Database,
  generateToken,
  newNonce,
  type Sql,
  signRequest,
} from "@platform/core";
import { createTestDatabase } from "@platform/core/testing";
import { createMinerKey, type MinerKey } from "./miner-key.js";

/** Options of {@link startTestChallenge}. */
export interface StartTestChallengeOptions {
  /** Which database: a fresh PostgreSQL database (TEST_DATABASE_URL) or in-memory PGlite (default). */
  backend?: Backend;
  /** The challenge's environment (nothing is inherited from `process.env`); LOG_LEVEL defaults to silent. */
  env?: Record<string, string | undefined>;
  /** The CHALLENGE_TOKEN to use (a fresh random one by default). */
  token?: string;
}

/** How a test signs a request: the body, and optionally another miner, nonce or timestamp. */
export interface SignedFetchInit extends Omit<RequestInit, "body"> {
  /** The exact body bytes to sign and send. */
  body?: string | Uint8Array;
  /** A JSON body (stringified, Content-Type application/json unless given). */
  json?: unknown;
  /** Sign as this miner instead of the test's own. */
  miner?: MinerKey;
  nonce?: string;
  timestamp?: number;
  /** Sign `/challenges/{slug}/...` and mark the request as the master's passthrough would. */
  viaProxy?: boolean;
}

/** Bridge identity overrides: the master sends a nonce and request hash unless told otherwise. */
export interface BridgeHeaderOptions {
  nonce?: string | null;
  requestHash?: string | null;
  filename?: string;
}

/** A challenge running on a fresh test database over a real socket. */
export interface TestChallenge<Cfg = unknown> {
  /** Base URL, e.g. http://127.0.0.1:54321 */
  url: string;
  slug: string;
  /** The CHALLENGE_TOKEN it runs with. */
  token: string;
  runtime: ChallengeInstance<Cfg>;
  db: Database;
  sql: Sql;
  /** A fresh miner hotkey that `signedFetch` signs with. */
  miner: MinerKey;
  /** Authorization bearer and both slug headers: what the master sends to internal routes. */
  internalHeaders: Record<string, string>;
  /** `internalHeaders` plus the verified identity the master adds on a bridge request. */
  bridgeHeaders(hotkey: string, options?: BridgeHeaderOptions): Record<string, string>;
  /** fetch(url + path). */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** The four signature headers for a request (to replay it, or send it by hand). */
  sign(method: string, path: string, init?: SignedFetchInit): Record<string, string>;
  /** fetch(url + path), signed as the miner over the exact target and body it sends. */
  signedFetch(path: string, init?: SignedFetchInit): Promise<Response>;
  /** Stop the server, close the runtime, drop the test database. */
  close(): Promise<void>;
}

/** A body fetch accepts (a copy of bytes backed by a plain ArrayBuffer). */
export function toBodyInit(body: string | Uint8Array | undefined): BodyInit | null {
  if (body === undefined) return null;
  return typeof body === "string" ? body : new Uint8Array(body);
}

function bodyOf(init: SignedFetchInit): {
  body: string | Uint8Array | undefined;
  headers: Headers;
} {
  const headers = new Headers(init.headers);
  if (init.json === undefined) return { body: init.body, headers };
  if (!headers.has("content-type")) headers.set("content-type", "application/json");
  return { body: JSON.stringify(init.json), headers };
}

/**
 * Start `challenge` on a fresh test database (migrated, `setup` run) over a real loopback socket,
 * with a random CHALLENGE_TOKEN and miner key, in one call. Independent of the test runner.
 * @example const t = await startTestChallenge(challenge, { backend: "postgres" }); ...; await t.close();
 */
export async function startTestChallenge<Cfg>(
  challenge: Challenge<Cfg>,
  options: StartTestChallengeOptions = {},
): Promise<TestChallenge<Cfg>> {
  const db = await createTestDatabase({ backend: options.backend ?? "pglite" });
  const token = options.token ?? generateToken("ct_");
  const { slug } = challenge;
  const env = {
    LOG_LEVEL: "silent",
    ...options.env,
    CHALLENGE_TOKEN: token,
    PLATFORM_CHALLENGE_SLUG: slug,
  };
  let running: Awaited<ReturnType<Challenge<Cfg>["start"]>>;
  try {
    running = await challenge.start({ env, db, host: "127.0.0.1", port: 0 });
  } catch (error) {
    await db.close();
    throw error;
  }
  const miner = await createMinerKey();
  const base = running.url;
  const internalHeaders = {
    authorization: `Bearer ${token}`,
    [PLATFORM_HEADERS.challengeSlug]: slug,
    [PLATFORM_HEADERS.coreChallengeSlug]: slug,
  };

  const sign = (method: string, path: string, init: SignedFetchInit = {}) => {
    const url = new URL(`${base}${path}`);
    const target = `${url.pathname}${url.search}`;
    const signed = signRequest(init.miner ?? miner, {
      method,
      url: init.viaProxy ? `${proxyPathPrefix(slug)}${target}` : url,
      body: bodyOf(init).body,
      slug,
      nonce: init.nonce,
      timestamp: init.timestamp,
    });
    return { ...signed } as Record<string, string>;
  };

  let closing: Promise<void> | undefined;
  return {
    url: base,
    slug,
    token,
    runtime: running.instance,
    db,
    sql: db.sql,
    miner,
    internalHeaders,
    bridgeHeaders(hotkey, bridge = {}) {
      const headers: Record<string, string> = {
        ...internalHeaders,
        [PLATFORM_HEADERS.verifiedHotkey]: hotkey,
        [PLATFORM_HEADERS.coreVerifiedHotkey]: hotkey,
      };
      const nonce = bridge.nonce === undefined ? newNonce() : bridge.nonce;
      if (nonce !== null) headers[PLATFORM_HEADERS.coreVerifiedNonce] = nonce;
      const hash =
        bridge.requestHash === undefined ? randomBytes(32).toString("hex") : bridge.requestHash;
      if (hash !== null) headers[PLATFORM_HEADERS.coreRequestHash] = hash;
      if (bridge.filename !== undefined)
        headers[PLATFORM_HEADERS.submissionFilename] = bridge.filename;
      return headers;
    },
    fetch: (path, init) => fetch(`${base}${path}`, init),
    sign: (method, path, init) => sign(method.toUpperCase(), path, init),
    signedFetch(path, init = {}) {
      const method = (init.method ?? "GET").toUpperCase();
      const { body, headers } = bodyOf(init);
      for (const [name, value] of Object.entries(sign(method, path, init)))
        headers.set(name, value);
      if (init.viaProxy) {
        headers.set(PLATFORM_HEADERS.proxy, "true");
        headers.set(PLATFORM_HEADERS.challengeSlug, slug);
      }
      const {
        json: _json,
        miner: _miner,
        nonce: _nonce,
        timestamp: _ts,
        viaProxy: _via,
        ...rest
      } = init;
      return fetch(`${base}${path}`, { ...rest, method, headers, body: toBodyInit(body) });
    },
    close: () =>
      (closing ??= (async () => {
        try {
          await running.close();
        } finally {
          await db.close();
        }
      })()),
  };
}
