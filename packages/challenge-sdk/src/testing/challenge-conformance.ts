import {
  type Challenge,
  type ChallengeRouteInfo,
  GET_WEIGHTS_PATH,
  PLATFORM_HEADERS,
  SDK_VERSION,
} from "@platform/challenge-sdk";
import { type Backend, signRequest, toOpenApiPath } from "@platform/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestChallenge, type TestChallenge, toBodyInit } from "./start-test-challenge.js";

/** A request the conformance suite sends, and which credential it carries. */
export interface ConformanceRequest {
  method: string;
  path: string;
  /** Exact body bytes. */
  body?: string | Uint8Array;
  /** A JSON body (stringified). */
  json?: unknown;
  headers?: Record<string, string>;
  /** Sign it as the test miner; "internal" adds the challenge token; "bridge" a verified miner. */
  as?: "public" | "signed" | "internal" | "bridge";
}

/** What a challenge hands the suite: itself, its environment, and probes it wants used. */
export interface ConformanceSubject<Cfg = unknown> {
  challenge: Challenge<Cfg>;
  /** Extra environment (the author's config variables). */
  env?: Record<string, string | undefined>;
  /** A request that must be answered 422; by default a signed (or internal) JSON route is probed. */
  invalidRequest?: ConformanceRequest;
}

/** Options of {@link runChallengeConformance}. */
export interface ConformanceOptions {
  /** Backends to run on (default ["pglite"]; pass `await testBackends()` for both). */
  backends?: readonly Backend[];
}

type Factory<Cfg> = () =>
  | Challenge<Cfg>
  | ConformanceSubject<Cfg>
  | Promise<Challenge<Cfg> | ConformanceSubject<Cfg>>;

/** `/v1/items/:id/files/:path+` with every parameter filled in, so the route matches. */
function concretePath(path: string): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)[+*?]?/g, "1");
}

function firstMethod(route: ChallengeRouteInfo): string {
  return route.methods[0] ?? "GET";
}

function acceptsBody(method: string): boolean {
  return method !== "GET" && method !== "HEAD";
}

/** Body and Content-Type that reach a route's body parser. */
function probeBody(
  route: ChallengeRouteInfo,
  body: string,
): { body?: string; headers: Record<string, string> } {
  if (!acceptsBody(firstMethod(route))) return { headers: {} };
  const type =
    route.body === "raw"
      ? (route.contentTypes?.[0] ?? "application/octet-stream")
      : "application/json";
  return { body, headers: { "content-type": type } };
}

function isSubject<Cfg>(
  value: Challenge<Cfg> | ConformanceSubject<Cfg>,
): value is ConformanceSubject<Cfg> {
  return "challenge" in value && typeof (value as ConformanceSubject<Cfg>).challenge === "object";
}

async function send(t: TestChallenge, request: ConformanceRequest): Promise<Response> {
  const method = request.method.toUpperCase();
  const headers: Record<string, string> = { ...request.headers };
  let body = request.body;
  if (request.json !== undefined) {
    body = JSON.stringify(request.json);
    headers["content-type"] ??= "application/json";
  }
  if (request.as === "signed") {
    return t.signedFetch(request.path, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
    });
  }
  if (request.as === "internal") Object.assign(headers, t.internalHeaders);
  if (request.as === "bridge") Object.assign(headers, t.bridgeHeaders(t.miner.hotkey));
  return t.fetch(request.path, { method, headers, body: toBodyInit(body) });
}

/** The 422 probe: the author's, else a JSON route sent a body no object schema accepts. */
function invalidProbe(subject: ConformanceSubject, routes: readonly ChallengeRouteInfo[]) {
  if (subject.invalidRequest) return subject.invalidRequest;
  for (const as of ["signed", "internal", "bridge", "public"] as const) {
    const route = routes.find(
      (r) => r.access === as && r.body === "json" && acceptsBody(firstMethod(r)),
    );
    if (route) {
      const { body, headers } = probeBody(route, "[null]");
      return { method: firstMethod(route), path: concretePath(route.path), as, headers, body };
    }
  }
  return undefined;
}

/**
 * Register the conformance suite every challenge runs on itself (vitest): /health, /version,
 * /openapi.json, get_weights authentication and reply shape, the exact FastAPI 422 shape,
 * bearer on every internal route, bridge identity, and on signed routes a replayed nonce (409)
 * and a tampered request (401).
 * @example runChallengeConformance("echo", () => challenge, { backends: await testBackends() });
 */
export function runChallengeConformance<Cfg>(
  name: string,
  factory: Factory<Cfg>,
  options: ConformanceOptions = {},
): void {
  const backends = options.backends ?? ["pglite"];
  describe.each([...backends])(`${name} conforms to the challenge contract on %s`, (backend) => {
    let t: TestChallenge<Cfg>;
    let subject: ConformanceSubject<Cfg>;
    let routes: readonly ChallengeRouteInfo[];
    beforeAll(async () => {
      const made = await factory();
      subject = isSubject(made) ? made : { challenge: made };
      routes = subject.challenge.routes();
      t = await startTestChallenge(subject.challenge, { backend, env: subject.env ?? {} });
    });
    afterAll(() => t?.close());

    const signedRoutes = () => routes.filter((r) => r.access === "signed");

    it("GET /health answers 200 with the slug, version and database backend", async () => {
      const response = await t.fetch("/health");
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({
        status: "ok",
        slug: subject.challenge.slug,
        version: subject.challenge.version,
        database: { backend, ok: true },
      });
    });

    it("GET /version reports version, api_version, sdk_version and capabilities", async () => {
      const response = await t.fetch("/version");
      expect(response.status).toBe(200);
      const body = (await response.json()) as Record<string, unknown>;
      expect(Object.keys(body).sort()).toEqual([
        "api_version",
        "capabilities",
        "sdk_version",
        "version",
      ]);
      expect(body).toMatchObject({
        version: subject.challenge.version,
        api_version: subject.challenge.apiVersion,
        sdk_version: SDK_VERSION,
      });
      expect(body["capabilities"]).toEqual(expect.arrayContaining(["get_weights", "proxy_routes"]));
    });

    it("GET /openapi.json is OpenAPI 3.1 and lists every public and signed route", async () => {
      const response = await t.fetch("/openapi.json");
      expect(response.status).toBe(200);
      const doc = (await response.json()) as {
        openapi: string;
        paths: Record<string, Record<string, unknown>>;
      };
      expect(doc.openapi).toBe("3.1.0");
      for (const route of routes) {
        if ((route.access !== "public" && route.access !== "signed") || route.hidden) continue;
        for (const method of route.methods) {
          expect(
            doc.paths[toOpenApiPath(route.path)]?.[method.toLowerCase()],
            `${method} ${route.path}`,
          ).toBeDefined();
        }
      }
    });

    describe("GET /internal/v1/get_weights", () => {
      const slugHeader = () => ({ [PLATFORM_HEADERS.challengeSlug]: subject.challenge.slug });

      it("is 401 invalid_internal_token without a bearer", async () => {
        const response = await t.fetch(GET_WEIGHTS_PATH, { headers: slugHeader() });
        expect(response.status).toBe(401);
        expect(await response.json()).toMatchObject({ code: "invalid_internal_token" });
      });

      it("is 401 invalid_internal_token with a wrong bearer", async () => {
        const response = await t.fetch(GET_WEIGHTS_PATH, {
          headers: { ...slugHeader(), authorization: `Bearer ${t.token}x` },
        });
        expect(response.status).toBe(401);
        expect(await response.json()).toMatchObject({ code: "invalid_internal_token" });
      });

      it("is 403 challenge_slug_mismatch with a missing or wrong slug", async () => {
        const bearer = { authorization: `Bearer ${t.token}` };
        for (const headers of [
          bearer,
          { ...bearer, [PLATFORM_HEADERS.challengeSlug]: `${subject.challenge.slug}-other` },
          { ...bearer, [PLATFORM_HEADERS.coreChallengeSlug]: "another-challenge" },
        ]) {
          const response = await t.fetch(GET_WEIGHTS_PATH, { headers });
          expect(response.status).toBe(403);
          expect(await response.json()).toMatchObject({ code: "challenge_slug_mismatch" });
        }
      });

      it("answers ChallengeWeightsResponse with the bearer and either slug header", async () => {
        for (const slugName of [
          PLATFORM_HEADERS.challengeSlug,
          PLATFORM_HEADERS.coreChallengeSlug,
        ]) {
          const response = await t.fetch(GET_WEIGHTS_PATH, {
            headers: { authorization: `Bearer ${t.token}`, [slugName]: subject.challenge.slug },
          });
          expect(response.status).toBe(200);
          const body = (await response.json()) as {
            challenge_slug: string;
            epoch: unknown;
            weights: Record<string, number>;
          };
          expect(body.challenge_slug).toBe(subject.challenge.slug);
          expect(
            body.epoch === null ||
              (Number.isSafeInteger(body.epoch) && (body.epoch as number) >= 0),
          ).toBe(true);
          const values = Object.values(body.weights);
          for (const value of values) expect(Number.isFinite(value) && value > 0).toBe(true);
          if (values.length > 0) expect(values.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
        }
      });
    });

    it("puts every internal route behind the bearer", async () => {
      for (const route of routes) {
        if (route.access !== "internal" && route.access !== "bridge") continue;
        const response = await t.fetch(concretePath(route.path), {
          method: firstMethod(route),
          headers: { [PLATFORM_HEADERS.challengeSlug]: subject.challenge.slug },
        });
        expect(response.status, `${firstMethod(route)} ${route.path}`).toBe(401);
      }
    });

    it("bridge routes refuse a request without a verified identity, whatever X-Hotkey says", async () => {
      for (const route of routes.filter((r) => r.access === "bridge")) {
        const method = firstMethod(route);
        const path = concretePath(route.path);
        const forged = signRequest(t.miner, {
          method,
          url: `${t.url}${path}`,
          slug: subject.challenge.slug,
        });
        const response = await t.fetch(path, {
          method,
          headers: { ...t.internalHeaders, ...forged },
        });
        expect(response.status, `${method} ${route.path}`).toBe(400);
        expect(await response.json()).toMatchObject({ code: "missing_verified_identity" });
      }
    });

    it("answers invalid input with 422 in FastAPI's exact HTTPValidationError shape", async () => {
      const probe = invalidProbe(subject as ConformanceSubject, routes);
      expect(
        probe,
        "no route to probe for a 422: give the suite `invalidRequest` in the factory's subject",
      ).toBeDefined();
      const response = await send(t as TestChallenge, probe!);
      expect(response.status).toBe(422);
      expect(response.headers.get("content-type")).toMatch(/^application\/json/);
      const body = (await response.json()) as Record<string, unknown>;
      expect(Object.keys(body)).toEqual(["detail"]);
      const detail = body["detail"] as Record<string, unknown>[];
      expect(Array.isArray(detail) && detail.length > 0).toBe(true);
      for (const issue of detail) {
        expect(Object.keys(issue).sort()).toEqual(["loc", "msg", "type"]);
        expect(Array.isArray(issue["loc"])).toBe(true);
        const loc = issue["loc"] as unknown[];
        expect(["body", "query", "path", "header"]).toContain(loc[0]);
        for (const part of loc)
          expect(typeof part === "string" || Number.isInteger(part)).toBe(true);
        expect(typeof issue["msg"]).toBe("string");
        expect(typeof issue["type"]).toBe("string");
      }
    });

    it("signed routes refuse a replayed nonce with 409 nonce_reused", async (context) => {
      const route = signedRoutes()[0];
      if (!route) return context.skip("the challenge has no signed route");
      const method = firstMethod(route);
      const path = concretePath(route.path);
      const { body, headers } = probeBody(route, JSON.stringify({ conformance: "replay" }));
      const signed = t.sign(method, path, body === undefined ? {} : { body });
      const init = {
        method,
        headers: { ...headers, ...signed },
        ...(body === undefined ? {} : { body }),
      };
      const first = await t.fetch(path, init);
      expect([401, 409]).not.toContain(first.status);
      const replay = await t.fetch(path, init);
      expect(replay.status).toBe(409);
      expect(await replay.json()).toMatchObject({ code: "nonce_reused" });
    });

    it("signed routes refuse a tampered request with 401", async (context) => {
      const route = signedRoutes()[0];
      if (!route) return context.skip("the challenge has no signed route");
      const method = firstMethod(route);
      const path = concretePath(route.path);
      const { body, headers } = probeBody(route, JSON.stringify({ conformance: "signed" }));
      if (body !== undefined) {
        const signed = t.sign(method, path, { body });
        const tampered = JSON.stringify({ conformance: "tampered" });
        const response = await t.fetch(path, {
          method,
          headers: { ...headers, ...signed },
          body: tampered,
        });
        expect(response.status).toBe(401);
        expect(await response.json()).toMatchObject({ code: "bad_signature" });
      }
      // The target is signed too: the same headers on another query are refused.
      const signed = t.sign(method, `${path}?conformance=1`, body === undefined ? {} : { body });
      const response = await t.fetch(`${path}?conformance=2`, {
        method,
        headers: { ...headers, ...signed },
        ...(body === undefined ? {} : { body }),
      });
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ code: "bad_signature" });
    });
  });
}
