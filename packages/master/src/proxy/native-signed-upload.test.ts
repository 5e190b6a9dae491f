import { randomBytes } from "node:crypto";
import { connect } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import {
  createApp,
  createLogger,
  generateMnemonic,
  initCrypto,
  keypairFromMnemonic,
  type RunningServer,
  type Sr25519Keypair,
  serve,
  signRequest,
} from "@platform/core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  deadOrigin,
  type EchoUpstream,
  type RawRequestOptions,
  type RawResponse,
  rawRequest,
  readAll,
  startEchoUpstream,
} from "../../test/proxy/echo-upstream.js";
import { registerChallenge } from "../../test/proxy/register-challenge.js";
import { startTestMaster, type TestMaster } from "../../test/test-master.js";
import { NonceStore } from "./nonce-store.js";
import {
  BRIDGE_PATH,
  registerSignedUploadRoute,
  type SignedUploadRoute,
} from "./signed-upload-route.js";
import { UpstreamClient } from "./upstream-client.js";

// Differential tests, as for the native passthrough: every upload goes to two listeners of one
// upload route, one with its native handler in front of the kit and one with the kit alone; the
// answers and what the challenge's bridge received must be the same. The kit is the reference
// (signed-upload-route.test.ts pins its behaviour down, and runs through the native handler
// too, since the master's listener has it). Each listener gets its own signature (a nonce is
// single use), so the fields that differ by signature are left out of the comparison.

const LIMIT = 64 * 1024;
const PATH = "/v1/challenges/live/submissions";
const FIXED_ID = "req-fixed-0001";
// Bridge headers that differ by signature (each listener gets a fresh nonce).
const PER_SIGNATURE = ["x-core-verified-nonce", "x-core-request-hash", "x-nonce", "x-signature"];

interface Upload {
  path?: string;
  /** The path the signature covers (default: `path`). */
  signedPath?: string;
  slug?: string;
  body?: Buffer | string;
  headers?: Record<string, string>;
  pair?: Sr25519Keypair;
  timestamp?: number;
  /** Leave these signature headers out. */
  drop?: string[];
}

describe("native signed upload", () => {
  let t: TestMaster;
  let up: EchoUpstream;
  let upstream: UpstreamClient;
  let route: SignedUploadRoute;
  let native: RunningServer;
  let kit: RunningServer;
  let miner: Sr25519Keypair;
  let other: Sr25519Keypair;
  /** Paths of every request the native listener left to the kit. */
  const kitCalls: string[] = [];

  beforeAll(async () => {
    await initCrypto();
    miner = keypairFromMnemonic(generateMnemonic());
    other = keypairFromMnemonic(generateMnemonic());
    up = await startEchoUpstream();
    up.on(BRIDGE_PATH, async (req, res, seen) => {
      seen.body = await readAll(req);
      res.writeHead(201, { "content-type": "application/json", "set-cookie": "s=1" });
      res.end(JSON.stringify({ id: "sub-1", bytes: seen.body.length }));
    });
    t = await startTestMaster("pglite");
    const log = createLogger({ name: "native-upload-test", level: "silent" });
    upstream = new UpstreamClient({ timeoutMs: 2_000, log });
    const app = createApp({ name: "upload-test", version: "0.0.0", logger: log });
    route = registerSignedUploadRoute(app, {
      store: t.master.store,
      upstream,
      nonces: new NonceStore(t.master.database.sql, { log }),
      uploadLimitBytes: LIMIT,
    });
    native = await serve(
      (request, env) => {
        kitCalls.push(new URL(request.url).pathname);
        return app.fetch(request, env);
      },
      { nodeHandler: route.native },
    );
    kit = await serve(app.fetch);
    await registerChallenge(t, "live", "active", up.url);
    await registerChallenge(t, "paused", "inactive", up.url);
    await registerChallenge(t, "dead", "active", await deadOrigin());
  });
  afterAll(async () => {
    await native.close();
    await kit.close();
    await route.close();
    await upstream.close();
    await t.close();
    await up.close();
  });
  beforeEach(() => {
    up.seen.length = 0;
    kitCalls.length = 0;
  });

  const zip = () => Buffer.concat([Buffer.from("PK\x03\x04", "latin1"), randomBytes(2044)]);

  const request = (upload: Upload): RawRequestOptions => {
    const body = upload.body ?? zip();
    const path = upload.path ?? PATH;
    const signature = signRequest(upload.pair ?? miner, {
      method: "POST",
      url: upload.signedPath ?? path,
      body,
      slug: upload.slug ?? "live",
      timestamp: upload.timestamp,
    }) as unknown as Record<string, string>;
    if (upload.pair === other) signature["X-Hotkey"] = miner.address; // signed by another key
    for (const name of upload.drop ?? []) delete signature[name];
    return {
      method: "POST",
      path,
      headers: {
        "content-type": "application/zip",
        "content-length": String(Buffer.byteLength(body)),
        "x-request-id": FIXED_ID,
        ...signature,
        ...upload.headers,
      },
      body,
    };
  };

  const comparable = (res: RawResponse) => {
    const headers = { ...res.headers };
    delete headers.date;
    return { status: res.status, headers, text: res.text };
  };
  const seenComparable = (port: number) =>
    JSON.parse(
      JSON.stringify(
        up.seen.map((seen) => {
          const headers = { ...seen.headers };
          for (const name of PER_SIGNATURE) delete headers[name];
          return { ...seen, headers };
        }),
      )
        .replaceAll(`:${port}`, ":MASTER")
        .replace(/"remotePort":\d+/g, '"remotePort":0'),
    ) as unknown;

  const both = async (given: Upload) => {
    const upload = { ...given, body: given.body ?? zip() }; // the same bytes to both
    const fromNative = await rawRequest(native.url, request(upload));
    const seenNative = seenComparable(native.port);
    const nativeKitCalls = [...kitCalls];
    up.seen.length = 0;
    const fromKit = await rawRequest(kit.url, request(upload));
    return {
      native: comparable(fromNative),
      kit: comparable(fromKit),
      seenNative,
      seenKit: seenComparable(kit.port),
      kitCalls: nativeKitCalls,
      status: fromNative.status,
    };
  };

  const TAKEN: [string, Upload, number][] = [
    ["a zip upload", {}, 201],
    ["a file name in the signed query", { path: `${PATH}?filename=agent.zip` }, 201],
    [
      "a JSON upload",
      { body: '{"answer":42}', headers: { "content-type": "application/json" } },
      201,
    ],
    [
      "forged identity and hop-by-hop headers",
      {
        headers: {
          "X-Platform-Verified-Hotkey": "5Evil",
          "X-Core-Verified-Nonce": "forged",
          "X-Submission-Filename": "evil.zip",
          Authorization: "Bearer stolen",
          Connection: "keep-alive, X-Hop",
          "X-Hop": "1",
        },
      },
      201,
    ],
    ["a signature for another challenge", { slug: "other" }, 401],
    ["a signature over another path", { signedPath: `${PATH}?filename=a.zip` }, 401],
    ["a timestamp outside the window", { timestamp: Math.floor(Date.now() / 1000) - 3600 }, 401],
    ["a repeated query key", { path: `${PATH}?filename=a.zip&filename=b.zip` }, 400],
    ["an inactive challenge", { path: "/v1/challenges/paused/submissions", slug: "paused" }, 404],
    ["an unknown challenge", { path: "/v1/challenges/ghost/submissions", slug: "ghost" }, 404],
    [
      "a challenge that refuses connections",
      { path: "/v1/challenges/dead/submissions", slug: "dead" },
      502,
    ],
  ];

  const sameSecond = <T extends { text: string }>(answer: T): T => ({
    ...answer,
    text: answer.text.replace(/is \d+ s in the past/, "is N s in the past"),
  });

  it.each(TAKEN)("answers %s as the kit does, without the kit", async (_name, upload, status) => {
    const result = await both(upload);
    expect(result.status).toBe(status);
    // The two answers are computed a moment apart: a timestamp's age may differ by a second.
    expect(sameSecond(result.native)).toEqual(sameSecond(result.kit));
    expect(result.seenNative).toEqual(result.seenKit);
    expect(result.kitCalls).toEqual([]);
  });

  it("refuses a key that signed for another hotkey (the attack, not only the slug)", async () => {
    const result = await both({ pair: other });
    expect(result.status).toBe(401);
    expect(result.native).toEqual(result.kit);
    expect(up.seen).toHaveLength(0);
    expect(result.kitCalls).toEqual([]);
  });

  it("refuses a replayed upload with 409 nonce_reused, as the kit does", async () => {
    for (const server of [native, kit]) {
      const once = request({});
      const first = await rawRequest(server.url, once);
      const replay = await rawRequest(server.url, once);
      expect([first.status, replay.status]).toEqual([201, 409]);
      expect(replay.json()).toMatchObject({ code: "nonce_reused" });
    }
    expect(up.seenAt(BRIDGE_PATH)).toHaveLength(2);
    expect(kitCalls).toEqual([]);
  });

  it("spends each nonce once when many uploads arrive together", async () => {
    const signed = Array.from({ length: 40 }, () => request({}));
    // Every upload twice, all in flight at once: one of each pair wins, the other is a replay.
    const answers = await Promise.all(
      [...signed, ...signed].map((options) => rawRequest(native.url, options)),
    );
    const statuses = answers.map((res) => res.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(40);
    expect(statuses.filter((s) => s === 409)).toHaveLength(40);
    expect(up.seenAt(BRIDGE_PATH)).toHaveLength(40);
  });

  const DECLINED: [string, Upload, number][] = [
    ["a missing signature header", { drop: ["X-Signature"] }, 401],
    ["another media type", { headers: { "content-type": "text/plain" } }, 415],
    ["a body over the limit", { body: Buffer.alloc(LIMIT + 1, 1) }, 413],
    ["a file name that is a path", { path: `${PATH}?filename=..%2Fx.zip` }, 400],
    ["a chunked body (read by the kit)", { headers: { "transfer-encoding": "chunked" } }, 201],
    ["a trailing slash (the kit routes it)", { path: `${PATH}/`, signedPath: `${PATH}/` }, 201],
    ["an encoded slug", { path: "/v1/challenges/%6Cive/submissions" }, 201],
    ["a doubled slash", { path: "//v1/challenges/live/submissions" }, 404],
  ];

  it.each(DECLINED)("leaves %s to the kit (%s)", async (_name, upload, status) => {
    const options = (u: Upload) => {
      const built = request(u);
      // A chunked upload has no length: drop the one `request` set.
      if (u.headers?.["transfer-encoding"]) delete built.headers!["content-length"];
      return built;
    };
    const fromNative = await rawRequest(native.url, options(upload));
    const nativeKitCalls = [...kitCalls];
    const fromKit = await rawRequest(kit.url, options(upload));
    expect(fromNative.status).toBe(status);
    expect(comparable(fromNative)).toEqual(comparable(fromKit));
    expect(nativeKitCalls).toHaveLength(1);
  });

  it("forwards nothing and spends no nonce when the client leaves mid-body", async () => {
    const options = request({ body: Buffer.alloc(32 * 1024, 3) });
    const nonce = options.headers!["X-Nonce"]!;
    const { port } = new URL(native.url);
    const socket = connect(Number(port), "127.0.0.1");
    await new Promise((resolve) => socket.once("connect", resolve));
    const head = Object.entries(options.headers!)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join("");
    socket.write(`POST ${PATH} HTTP/1.1\r\nhost: x\r\n${head}\r\n`);
    socket.write(Buffer.alloc(1024, 3)); // a thirty-second of the declared body
    await sleep(100);
    socket.destroy();
    await sleep(200);
    expect(up.seenAt(BRIDGE_PATH)).toHaveLength(0);
    const rows = await t.master.database.sql`
      select 1 from submission_nonces where nonce = ${nonce}`;
    expect(rows).toHaveLength(0);
    expect(kitCalls).toEqual([]);
  });
});
