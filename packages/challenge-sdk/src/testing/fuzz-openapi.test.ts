import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { fuzzOpenApi, summarizeFuzzReport } from "./fuzz-openapi.js";

const SECRET = "sk-live-0123456789abcdef";
const ADMIN = "admin-token-for-the-fuzz-test";
const UPSTREAM = "127.0.0.1:59999";

const item = { type: "object", required: ["name"], properties: { name: { type: "string" } } };
const operation = (extra: Record<string, unknown> = {}) => ({ responses: {}, ...extra });
const openapi = {
  openapi: "3.1.0",
  info: { title: "broken", version: "1" },
  paths: {
    "/items/{id}": {
      get: operation({
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "integer" } }],
      }),
    },
    "/items": {
      post: operation({
        requestBody: { content: { "application/json": { schema: item } } },
      }),
    },
    "/search": {
      get: operation({
        parameters: [{ name: "q", in: "query", required: true, schema: { type: "string" } }],
      }),
    },
    "/admin/config": { get: operation({ security: [{ adminToken: [] }] }) },
    "/status": { get: operation() },
  },
};

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  if (server?.listening) await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** A server that serves `openapi` and answers every other request with `handler`. */
async function serve(handler: Handler, seen: string[] = []): Promise<string> {
  server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString();
    if (req.url === "/openapi.json") {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify(openapi));
      return;
    }
    seen.push(`${req.method} ${req.url} ${req.headers["x-admin-token"] ?? "-"} ${body}`);
    try {
      handler(req, res, body);
    } catch {
      // What a framework without an error handler does: a bare 500.
      reply(res, 500, "Internal Server Error");
    }
  });
  // Node closes a CONNECT it has no listener for; a careful server answers it.
  server.on("connect", (_req, socket) => {
    socket.end("HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n");
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const reply = (res: ServerResponse, status: number, body: string) => {
  res.statusCode = status;
  res.end(body);
};

/** A careful server: 404 outside its routes, 422 on bad input, 200 otherwise. */
const careful: Handler = (req, res, body) => {
  const url = new URL(req.url ?? "/", "http://x");
  if (url.pathname === "/items" && req.method === "POST") {
    try {
      const value = JSON.parse(body) as { name?: unknown };
      if (typeof value?.name !== "string") return reply(res, 422, '{"detail":[]}');
      return reply(res, 201, "{}");
    } catch {
      return reply(res, 422, '{"detail":[]}');
    }
  }
  if (url.pathname === "/admin/config") {
    return reply(res, req.headers["x-admin-token"] === ADMIN ? 200 : 401, "{}");
  }
  if (/^\/items\/-?\d+$/.test(url.pathname) || url.pathname === "/status") {
    return reply(res, 200, "{}");
  }
  if (url.pathname === "/search") return reply(res, url.searchParams.get("q") ? 200 : 422, "{}");
  return reply(res, req.method === "GET" ? 404 : 405, '{"detail":"no"}');
};

const options = (baseUrl: string) => ({
  baseUrl,
  credentials: [{ schemes: ["adminToken"], headers: { "x-admin-token": ADMIN } }],
  secrets: [SECRET, ADMIN],
  internalAddresses: [UPSTREAM],
  validRuns: 3,
  invalidRuns: 6,
});

describe("fuzzOpenApi", () => {
  it("passes a careful server, covering every route with valid and invalid requests", async () => {
    const report = await fuzzOpenApi(options(await serve(careful)));
    expect(report.findings, summarizeFuzzReport(report)).toEqual([]);
    expect(report.ok).toBe(true);
    const routes = report.routes.map((r) => r.route);
    for (const route of [
      "GET /items/{id}",
      "POST /items",
      "GET /search",
      "GET /admin/config",
      "GET /status",
    ])
      expect(routes).toContain(route);
    expect(report.routes.every((r) => r.requests > 0)).toBe(true);
    // Both answers a careful server gives: accepted, and refused as invalid.
    const post = report.routes.find((r) => r.route === "POST /items")!;
    expect(post.statuses["201"]).toBeGreaterThan(0);
    expect(post.statuses["422"]).toBeGreaterThan(0);
    // The admin credential got past auth on some requests, and some went without it.
    const admin = report.routes.find((r) => r.route === "GET /admin/config")!;
    expect(admin.statuses["200"]).toBeGreaterThan(0);
    expect(admin.statuses["401"]).toBeGreaterThan(0);
    expect(report.requests).toBe(report.routes.reduce((n, r) => n + r.requests, 0));
  });

  it("sends the same requests for the same seed, and others for another seed", async () => {
    const runs: string[][] = [[], [], []];
    for (const [index, seed] of [7, 7, 8].entries()) {
      const base = await serve(careful, runs[index]);
      await fuzzOpenApi({ ...options(base), seed, concurrency: 1 });
      server?.closeAllConnections();
      await new Promise((resolve) => server?.close(resolve));
    }
    expect(runs[0]!.length).toBeGreaterThan(20);
    expect(runs[1]).toEqual(runs[0]);
    expect(runs[2]).not.toEqual(runs[0]);
  });

  it("reports a 5xx on invalid input, with the request that caused it", async () => {
    const base = await serve((req, res, body) => {
      if (req.method === "POST" && req.url === "/items") {
        // Trusts the body's shape: a wrong type crashes it.
        const value = JSON.parse(body) as { name: string };
        return reply(res, value.name.toUpperCase() ? 201 : 500, "{}");
      }
      careful(req, res, body);
    });
    const report = await fuzzOpenApi(options(base));
    const kinds = report.findings.filter((f) => f.route === "POST /items").map((f) => f.kind);
    expect(kinds).toContain("server_error");
    const finding = report.findings.find((f) => f.kind === "server_error")!;
    expect(finding).toMatchObject({ method: "POST", target: "/items", status: 500 });
    expect(finding.requestKind).toMatch(/wrong-type|missing-required|malformed-body|extra/);
    expect(report.ok).toBe(false);
  });

  it("reports a stack trace, a file path, an internal address and a secret in responses", async () => {
    const base = await serve((req, res, body) => {
      const url = new URL(req.url ?? "/", "http://x");
      if (url.pathname.startsWith("/items/") && !/^\/items\/-?\d+$/.test(url.pathname)) {
        return reply(
          res,
          400,
          `{"detail":"Error: bad id\\n    at parseId (/srv/app/src/items.ts:12:7)"}`,
        );
      }
      if (url.pathname === "/search" && (url.searchParams.get("q") ?? "").length > 1_000) {
        return reply(res, 502, `{"detail":"upstream ${UPSTREAM} refused"}`);
      }
      if (url.pathname === "/admin/config" && req.headers["x-admin-token"] === ADMIN) {
        res.setHeader("x-debug", `key=${SECRET}`);
        return reply(res, 200, "{}");
      }
      if (url.pathname === "/status") {
        return reply(res, 200, `{"module":"/opt/app/node_modules/pg/lib/client.js"}`);
      }
      careful(req, res, body);
    });
    const report = await fuzzOpenApi({ ...options(base), invalidRuns: 20 });
    const found = (kind: string, route: string) =>
      report.findings.some((f) => f.kind === kind && f.route === route);
    expect(found("stack_trace", "GET /items/{id}"), summarizeFuzzReport(report)).toBe(true);
    expect(found("internal_address", "GET /items/{id}")).toBe(true);
    expect(found("server_error", "GET /search")).toBe(true);
    expect(found("internal_address", "GET /search")).toBe(true);
    expect(found("secret", "GET /admin/config")).toBe(true);
    expect(found("internal_address", "GET /status")).toBe(true);
    // A finding never quotes the secret itself.
    expect(JSON.stringify(report)).not.toContain(SECRET);
  });

  it("reports an undeclared method that gets a 5xx or no answer at all", async () => {
    const base = await serve((req, res, body) => {
      if (req.method === "TRACE") return reply(res, 500, '{"detail":"boom"}');
      if (req.method === "PROPFIND") return req.socket.destroy();
      careful(req, res, body);
    });
    const report = await fuzzOpenApi(options(base));
    const odd = report.findings.filter((f) => f.requestKind === "odd-method");
    expect(odd.some((f) => f.method === "TRACE" && f.kind === "server_error")).toBe(true);
    expect(odd.some((f) => f.method === "PROPFIND" && f.kind === "no_response")).toBe(true);
  });

  it("stops at the time limit and says so", async () => {
    const base = await serve((req, res, body) => {
      setTimeout(() => careful(req, res, body), 50);
    });
    const report = await fuzzOpenApi({ ...options(base), timeLimitMs: 200, concurrency: 1 });
    expect(report.timedOut).toBe(true);
    expect(report.ok).toBe(false);
    expect(report.requests).toBeLessThan(20);
  });
});
