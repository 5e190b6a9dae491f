import { createHash } from "node:crypto";
import { Agent, request as httpRequest } from "node:http";
import { createLogger, type RunningServer, serve } from "@platform/core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  deadOrigin,
  type EchoUpstream,
  type RawRequestOptions,
  type RawResponse,
  rawRequest,
  startEchoUpstream,
} from "../../test/proxy/echo-upstream.js";
import { registerChallenge } from "../../test/proxy/register-challenge.js";
import { startTestMaster, type TestMaster } from "../../test/test-master.js";
import { createNativePassthrough } from "./native-passthrough.js";
import { UpstreamClient } from "./upstream-client.js";

// Differential tests: every request goes to two listeners of the same master, one with the
// native passthrough in front of the app kit and one with the kit alone, and both answers (and
// what the challenge received) must be the same. The kit is the reference: its behaviour is what
// passthrough-route.test.ts pins down. The database backend plays no part here (the store's
// cache is the same code either way), so PGlite alone.

const TIMEOUT_MS = 1_000;
const FIXED_ID = "req-fixed-0001";

describe("native passthrough", () => {
  let t: TestMaster;
  let up: EchoUpstream;
  let upstream: UpstreamClient;
  let native: RunningServer;
  let kit: RunningServer;
  /** Paths (as the kit's URL has them) of every request the native listener left to the kit. */
  const kitCalls: string[] = [];

  beforeAll(async () => {
    up = await startEchoUpstream();
    t = await startTestMaster("pglite", (config) => {
      config.proxy.timeoutMs = TIMEOUT_MS;
    });
    const log = createLogger({ name: "native-test", level: "silent" });
    upstream = new UpstreamClient({ timeoutMs: TIMEOUT_MS, log });
    const app = t.master.app;
    native = await serve(
      (request, env) => {
        kitCalls.push(new URL(request.url).pathname);
        return app.fetch(request, env);
      },
      { nodeHandler: createNativePassthrough({ store: t.master.store, upstream, log }) },
    );
    kit = await serve(app.fetch);
    await registerChallenge(t, "live", "active", up.url);
    await registerChallenge(t, "prefixed", "active", `${up.url}/api/`);
    await registerChallenge(t, "paused", "inactive", up.url);
    await registerChallenge(t, "nourl", "active");
    await registerChallenge(t, "dead", "active", await deadOrigin());
    up.on("/teapot", (_req, res) => {
      res.writeHead(418, "Short And Stout", {
        "x-multi": ["a", "b"],
        "set-cookie": ["a=1; Path=/", "b=2; Path=/admin"],
        connection: "X-Hop-Resp",
        "x-hop-resp": "1",
        "x-request-id": "upstream-id",
        "content-type": "text/plain",
      });
      res.end("short and stout");
    });
    up.on("/moved", (_req, res) => {
      res.writeHead(302, { location: "/elsewhere?x=1" });
      res.end();
    });
    up.on("/cors", (_req, res) => {
      res.writeHead(204, { allow: "GET, POST", "content-length": "0" });
      res.end();
    });
    up.on("/hints", (_req, res) => {
      res.writeEarlyHints({ link: "</style.css>; rel=preload" });
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("after hints");
    });
    up.on("/chunked", (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("one;");
      setTimeout(() => res.end("two"), 20);
    });
    up.on("/status-600", (req) => {
      req.socket.end("HTTP/1.1 600 Weird\r\ncontent-length: 2\r\n\r\nok");
    });
    up.on("/big", (_req, res) => {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      const chunk = Buffer.alloc(256 * 1024, 7);
      let sent = 0;
      const pump = () => {
        while (sent < 16) {
          sent += 1;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        res.end();
      };
      pump();
    });
  });
  afterAll(async () => {
    await native.close();
    await kit.close();
    await upstream.close();
    await t.close();
    await up.close();
  });
  beforeEach(() => {
    up.seen.length = 0;
    kitCalls.length = 0;
  });

  // One answer, with what differs by listener alone (its port, the date) made comparable.
  const comparable = (res: RawResponse, port: number) => {
    const headers = { ...res.headers };
    delete headers.date;
    return JSON.parse(
      JSON.stringify({ status: res.status, headers, text: res.text }).replaceAll(
        `:${port}`,
        ":MASTER",
      ),
    ) as unknown;
  };

  const both = async (options: RawRequestOptions) => {
    const headers = { "x-request-id": FIXED_ID, ...options.headers };
    const fromNative = await rawRequest(native.url, { ...options, headers });
    const seenNative = JSON.stringify(up.seen).replaceAll(`:${native.port}`, ":MASTER");
    const nativeKitCalls = [...kitCalls];
    up.seen.length = 0;
    const fromKit = await rawRequest(kit.url, { ...options, headers });
    const seenKit = JSON.stringify(up.seen).replaceAll(`:${kit.port}`, ":MASTER");
    return {
      native: comparable(fromNative, native.port),
      kit: comparable(fromKit, kit.port),
      seenNative: JSON.parse(seenNative.replace(/"remotePort":\d+/g, '"remotePort":0')),
      seenKit: JSON.parse(seenKit.replace(/"remotePort":\d+/g, '"remotePort":0')),
      kitCalls: nativeKitCalls,
      status: fromNative.status,
    };
  };

  const TAKEN: [string, RawRequestOptions][] = [
    [
      "GET with forged, hop-by-hop and kept headers and a query",
      {
        path: "/challenges/live/items/caf%C3%A9/%2561?b=2&a=%20x&plus=a+b",
        headers: {
          "X-Platform-Verified-Hotkey": "5Evil",
          x_core_request_hash: "forged",
          Authorization: "Bearer stolen",
          Cookie: "session=secret",
          "X-Forwarded-For": "203.0.113.9",
          "X-Forwarded-Proto": "HTTPS",
          Connection: "keep-alive, X-Secret-Hop",
          "X-Secret-Hop": "1",
          "Proxy-Authorization": "Basic eA==",
          "X-Hotkey": "5Miner",
          "X-Custom": "  padded  ",
          Expect: "100-continue",
        },
      },
    ],
    ["the root without a slash", { path: "/challenges/live" }],
    ["the root with slashes", { path: "/challenges/live//" }],
    ["dot segments resolved inside the challenge", { path: "/challenges/live/a/./b/../c" }],
    ["a base URL with a path", { path: "/challenges/prefixed/v1/items?x=1" }],
    [
      "POST with a JSON body",
      {
        method: "POST",
        path: "/challenges/live/items",
        headers: { "content-type": "application/json" },
        body: '{"n":1}',
      },
    ],
    [
      "PUT with a chunked body",
      {
        method: "PUT",
        path: "/challenges/live/items/1",
        headers: { "transfer-encoding": "chunked" },
        body: "x".repeat(100_000),
      },
    ],
    [
      "PATCH with an empty body",
      { method: "PATCH", path: "/challenges/live/items/1", headers: { "content-length": "0" } },
    ],
    ["DELETE without a body", { method: "DELETE", path: "/challenges/live/items/1" }],
    ["HEAD", { method: "HEAD", path: "/challenges/live/file" }],
    ["OPTIONS answered 204", { method: "OPTIONS", path: "/challenges/live/cors" }],
    ["a challenge's own 4xx with cookies and hop headers", { path: "/challenges/live/teapot" }],
    ["a redirect, not followed", { path: "/challenges/live/moved" }],
    ["early hints before the answer", { path: "/challenges/live/hints" }],
    ["a chunked answer", { path: "/challenges/live/chunked" }],
    ["an unknown challenge", { path: "/challenges/ghost/x" }],
    ["an inactive challenge", { path: "/challenges/paused/x" }],
    ["a challenge without an address", { path: "/challenges/nourl/x" }],
    ["a challenge that refuses connections", { path: "/challenges/dead/x" }],
    ["a challenge answering an invalid status", { path: "/challenges/live/status-600" }],
    [
      "a refused POST with an unread body (connection closed)",
      { method: "POST", path: "/challenges/ghost/x", body: "y".repeat(300_000) },
    ],
  ];

  it.each(TAKEN)("answers %s as the kit does, without the kit", async (_name, options) => {
    const result = await both(options);
    expect(result.native).toEqual(result.kit);
    expect(result.seenNative).toEqual(result.seenKit);
    expect(result.kitCalls).toEqual([]);
  });

  const DECLINED: [string, string, number][] = [
    ["a blocked path", "/challenges/live/health", 403],
    ["a blocked spelling", "/challenges/live/%2568ealth", 403],
    ["the readiness probe", "/challenges/live/readyz", 403],
    ["the liveness probe, respelled", "/challenges/live/%256civez", 403],
    ["the scrape path", "/challenges/live/a/../metrics", 403],
    ["malformed percent-encoding (the kit's 422)", "/challenges/live/%ff", 422],
    ["non-UTF-8 once decoded", "/challenges/live/%25ff", 400],
    ["a control character once decoded", "/challenges/live/a%00", 400],
    ["a target that leaves /challenges", "/challenges/live/../../version", 200],
    ["the bare prefix", "/challenges", 404],
    ["an empty slug", "/challenges//live/x", 404],
    ["a slug that cannot be one", "/challenges/Not_A_Slug/x", 404],
    ["another route", "/v1/registry", 200],
  ];

  it.each(DECLINED)("leaves %s to the kit (%s)", async (_name, path, status) => {
    const result = await both({ path });
    expect(result.status).toBe(status);
    expect(result.native).toEqual(result.kit);
    expect(result.kitCalls).toHaveLength(1);
    expect(up.seen).toHaveLength(0);
  });

  it("mints the request id the kit would, and gives the challenge the one it answers with", async () => {
    for (const sent of [undefined, "has spaces", "x".repeat(129)]) {
      const headers: Record<string, string> = sent === undefined ? {} : { "x-request-id": sent };
      up.seen.length = 0;
      const res = await rawRequest(native.url, { path: "/challenges/live/id", headers });
      const id = res.headers["x-request-id"];
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect(up.seen[0]!.headers["x-request-id"]).toEqual([id]);
    }
    expect(kitCalls).toEqual([]);
  });

  it("streams a large answer and a large upload through intact", async () => {
    const big = await rawRequest(native.url, { path: "/challenges/live/big" });
    expect(big.body.length).toBe(16 * 256 * 1024);
    const upload = Buffer.alloc(3 * 1024 * 1024, 9);
    const echoed = await rawRequest(native.url, {
      method: "POST",
      path: "/challenges/live/upload",
      headers: { "transfer-encoding": "chunked" },
      body: upload,
    });
    expect(echoed.json()).toMatchObject({
      body_sha256: createHash("sha256").update(upload).digest("hex"),
    });
    expect(kitCalls).toEqual([]);
  });

  it("keeps a keep-alive connection serving after a streamed answer", async () => {
    const { port } = new URL(native.url);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const send = (path: string) =>
      new Promise<{ status: number; port: number | undefined }>((resolve, reject) => {
        const req = httpRequest({ host: "127.0.0.1", port, path, agent }, (res) => {
          const local = res.socket?.localPort;
          res.resume();
          res.on("end", () => resolve({ status: res.statusCode ?? 0, port: local }));
        });
        req.on("error", reject);
        req.end();
      });
    try {
      const first = await send("/challenges/live/chunked");
      const second = await send("/challenges/live/after");
      expect([first.status, second.status]).toEqual([200, 200]);
      expect(second.port).toBe(first.port); // the same client connection
    } finally {
      agent.destroy();
    }
  });
});
