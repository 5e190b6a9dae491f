// The conformance checks as plain async functions that throw on failure, so the same checks run
// under vitest (`runChallengeConformance`) and from any code (`checkChallengeConformance`), and
// the kit never needs a test runner to load. Messages name the route and what was expected,
// because the author reading them did not write the suite.
import { type Challenge, type ChallengeRouteInfo, GET_WEIGHTS_PATH } from "@platform/challenge-sdk";
import { PLATFORM_HEADERS } from "@platform/challenge-sdk/proxy-contract";
import {
  type Backend,
  ChallengeWeightsResponse,
  signRequest,
  toOpenApiPath,
  validateValue,
} from "@platform/core";
import { METRICS_PATH } from "../service-paths.js";
import { SDK_VERSION } from "../version.js";
import type {
  ConformanceCheckId,
  ConformanceInput,
  ConformanceRequest,
  ConformanceSubject,
} from "./check-challenge-conformance.js";
import { startTestChallenge, type TestChallenge, toBodyInit } from "./start-test-challenge.js";

/** A check's verdict when it does not apply (thrown errors are failures). */
export interface Skipped {
  skip: string;
}

/** What every check sees: the running challenge, what its author declared, and its routes. */
export interface CheckContext {
  backend: Backend;
  t: TestChallenge;
  subject: ConformanceSubject;
  routes: readonly ChallengeRouteInfo[];
}

/** One conformance check: a stable id, the sentence a test runner prints, the probe. */
export interface ConformanceCheck {
  id: ConformanceCheckId;
  title: string;
  run(ctx: CheckContext): Promise<Skipped | undefined>;
}

/** A conformance failure: what was sent, what came back, what the contract wants. */
export class ConformanceFailure extends Error {
  override readonly name = "ConformanceFailure";
}

function fail(message: string): never {
  throw new ConformanceFailure(message);
}

function ensure(condition: boolean, message: string): asserts condition {
  if (!condition) fail(message);
}

/** The answer's body for a message: short, whatever it is. */
async function snippet(response: Response): Promise<string> {
  const text = await response.text().catch(() => "");
  return text.length > 300 ? `${text.slice(0, 300)}...` : text;
}

async function expectStatus(response: Response, expected: number, what: string): Promise<void> {
  if (response.status === expected) return;
  fail(`${what}: expected ${expected}, got ${response.status} ${await snippet(response)}`);
}

async function jsonOf(response: Response, what: string): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    return fail(`${what}: the body is not JSON: ${text.slice(0, 300)}`);
  }
}

/** Expect `status` and an error body `{ code }` (HttpError's shape). */
async function expectRefusal(
  response: Response,
  status: number,
  code: string,
  what: string,
): Promise<void> {
  await expectStatus(response, status, what);
  const body = (await jsonOf(response, what)) as { code?: unknown } | null;
  ensure(
    body?.code === code,
    `${what}: expected code "${code}", got ${JSON.stringify(body?.code)}`,
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

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

/** A request that must carry a miner's signature, and a tampered copy of its body. */
interface SignedProbe {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  tampered?: string | Uint8Array;
}

function requestBody(request: ConformanceRequest): {
  body?: string | Uint8Array;
  headers: Record<string, string>;
} {
  const headers = { ...request.headers };
  if (request.json === undefined)
    return request.body === undefined ? { headers } : { body: request.body, headers };
  const hasType = Object.keys(headers).some((name) => name.toLowerCase() === "content-type");
  if (!hasType) headers["content-type"] = "application/json";
  return { body: JSON.stringify(request.json), headers };
}

/** One byte more: any signature over the original must no longer verify. */
function tamper(body: string | Uint8Array): string | Uint8Array {
  return typeof body === "string" ? `${body} ` : new Uint8Array([...body, 0x20]);
}

/** Every signed route (probed with a JSON body), then the requests the author named. */
function signedProbes(ctx: CheckContext): SignedProbe[] {
  const probes: SignedProbe[] = [];
  for (const route of ctx.routes) {
    if (route.access !== "signed") continue;
    const { body, headers } = probeBody(route, JSON.stringify({ conformance: "signed" }));
    probes.push({
      method: firstMethod(route),
      path: concretePath(route.path),
      headers,
      ...(body === undefined
        ? {}
        : { body, tampered: JSON.stringify({ conformance: "tampered" }) }),
    });
  }
  for (const request of ctx.subject.signedRequests ?? []) {
    const { body, headers } = requestBody(request);
    probes.push({
      method: request.method.toUpperCase(),
      path: request.path,
      headers,
      ...(body === undefined ? {} : { body, tampered: tamper(body) }),
    });
  }
  return probes;
}

const NO_SIGNED: Skipped = {
  skip: "the challenge has no signed route (and the subject names no `signedRequests`)",
};

async function send(t: TestChallenge, request: ConformanceRequest): Promise<Response> {
  const method = request.method.toUpperCase();
  const { body, headers } = requestBody(request);
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
function invalidProbe(ctx: CheckContext): ConformanceRequest | undefined {
  if (ctx.subject.invalidRequest) return ctx.subject.invalidRequest;
  for (const as of ["signed", "internal", "bridge", "public"] as const) {
    const route = ctx.routes.find(
      (r) => r.access === as && r.body === "json" && acceptsBody(firstMethod(r)),
    );
    if (route) {
      const { body, headers } = probeBody(route, "[null]");
      return {
        method: firstMethod(route),
        path: concretePath(route.path),
        as,
        headers,
        ...(body === undefined ? {} : { body }),
      };
    }
  }
  return undefined;
}

const slugHeader = (ctx: CheckContext) => ({
  [PLATFORM_HEADERS.challengeSlug]: ctx.subject.challenge.slug,
});

/** Every check, in the order a runner reports them. */
export const CONFORMANCE_CHECKS: readonly ConformanceCheck[] = [
  {
    id: "health",
    title: "GET /health answers 200 with the slug, version and database backend",
    async run({ t, subject, backend }) {
      const response = await t.fetch("/health");
      await expectStatus(response, 200, "GET /health");
      const body = await jsonOf(response, "GET /health");
      const { slug, version } = subject.challenge;
      const database = isRecord(body) ? body["database"] : undefined;
      ensure(
        isRecord(body) &&
          body["status"] === "ok" &&
          body["slug"] === slug &&
          body["version"] === version &&
          isRecord(database) &&
          database["backend"] === backend &&
          database["ok"] === true,
        `GET /health: expected { status: "ok", slug: "${slug}", version: "${version}", database: { backend: "${backend}", ok: true } }, got ${JSON.stringify(body)}`,
      );
      return undefined;
    },
  },
  {
    id: "version",
    title: "GET /version reports api_version, challenge_version, sdk_version and capabilities",
    async run({ t, subject }) {
      const response = await t.fetch("/version");
      await expectStatus(response, 200, "GET /version");
      const body = await jsonOf(response, "GET /version");
      ensure(isRecord(body), `GET /version: expected an object, got ${JSON.stringify(body)}`);
      const keys = Object.keys(body).sort().join(",");
      ensure(
        keys === "api_version,capabilities,challenge_version,sdk_version",
        `GET /version: expected exactly api_version, capabilities, challenge_version and sdk_version, got ${keys}`,
      );
      const { version, apiVersion } = subject.challenge;
      ensure(
        body["challenge_version"] === version &&
          body["api_version"] === apiVersion &&
          body["sdk_version"] === SDK_VERSION,
        `GET /version: expected challenge_version "${version}", api_version "${apiVersion}", sdk_version "${SDK_VERSION}", got ${JSON.stringify(body)}`,
      );
      const capabilities = body["capabilities"];
      ensure(
        Array.isArray(capabilities) &&
          capabilities.includes("get_weights") &&
          capabilities.includes("proxy_routes"),
        `GET /version: capabilities must include "get_weights" and "proxy_routes", got ${JSON.stringify(capabilities)}`,
      );
      return undefined;
    },
  },
  {
    id: "readiness",
    title: "GET /livez answers 200, and GET /readyz answers 200 with the database check passing",
    async run({ t }) {
      const live = await t.fetch("/livez");
      await expectStatus(live, 200, "GET /livez");
      const liveBody = await jsonOf(live, "GET /livez");
      ensure(
        isRecord(liveBody) && liveBody["status"] === "ok",
        `GET /livez: expected { status: "ok" }, got ${JSON.stringify(liveBody)}`,
      );
      const ready = await t.fetch("/readyz");
      await expectStatus(ready, 200, "GET /readyz");
      const body = await jsonOf(ready, "GET /readyz");
      const checks = isRecord(body) ? body["checks"] : undefined;
      const database = isRecord(checks) ? checks["database"] : undefined;
      ensure(
        isRecord(body) &&
          body["status"] === "ok" &&
          isRecord(database) &&
          database["status"] === "ok",
        `GET /readyz: expected { status: "ok", checks: { database: { status: "ok" } } }, got ${JSON.stringify(body)}`,
      );
      return undefined;
    },
  },
  {
    id: "metrics",
    title:
      "GET /internal/v1/metrics is 401 without the challenge token and Prometheus text with it",
    async run({ t }) {
      await expectRefusal(
        await t.fetch(METRICS_PATH),
        401,
        "invalid_internal_token",
        `GET ${METRICS_PATH} without a bearer`,
      );
      // Prometheus sends the bearer alone: no slug header.
      const response = await t.fetch(METRICS_PATH, {
        headers: { authorization: `Bearer ${t.token}` },
      });
      await expectStatus(response, 200, `GET ${METRICS_PATH} with the bearer`);
      const type = response.headers.get("content-type") ?? "";
      const text = await response.text();
      ensure(
        type.startsWith("text/plain") &&
          text.includes("# TYPE challenge_http_requests_total counter") &&
          text.includes("# TYPE challenge_ready gauge"),
        `GET ${METRICS_PATH}: expected the Prometheus text format with challenge_http_requests_total and challenge_ready, got ${type}: ${text.slice(0, 300)}`,
      );
      return undefined;
    },
  },
  {
    id: "openapi",
    title: "GET /openapi.json is OpenAPI 3.1 and lists every public and signed route",
    async run({ t, routes }) {
      const response = await t.fetch("/openapi.json");
      await expectStatus(response, 200, "GET /openapi.json");
      const doc = (await jsonOf(response, "GET /openapi.json")) as {
        openapi?: unknown;
        paths?: Record<string, Record<string, unknown> | undefined>;
      } | null;
      ensure(
        doc?.openapi === "3.1.0",
        `GET /openapi.json: expected openapi "3.1.0", got ${JSON.stringify(doc?.openapi)}`,
      );
      const missing: string[] = [];
      for (const route of routes) {
        if ((route.access !== "public" && route.access !== "signed") || route.hidden) continue;
        for (const method of route.methods) {
          if (doc.paths?.[toOpenApiPath(route.path)]?.[method.toLowerCase()] === undefined)
            missing.push(`${method} ${route.path}`);
        }
      }
      ensure(missing.length === 0, `GET /openapi.json does not document ${missing.join(", ")}`);
      return undefined;
    },
  },
  {
    id: "weights-no-bearer",
    title: "GET /internal/v1/get_weights is 401 invalid_internal_token without a bearer",
    async run(ctx) {
      const response = await ctx.t.fetch(GET_WEIGHTS_PATH, { headers: slugHeader(ctx) });
      await expectRefusal(
        response,
        401,
        "invalid_internal_token",
        `GET ${GET_WEIGHTS_PATH} without a bearer`,
      );
      return undefined;
    },
  },
  {
    id: "weights-wrong-bearer",
    title: "GET /internal/v1/get_weights is 401 invalid_internal_token with a wrong bearer",
    async run(ctx) {
      const response = await ctx.t.fetch(GET_WEIGHTS_PATH, {
        headers: { ...slugHeader(ctx), authorization: `Bearer ${ctx.t.token}x` },
      });
      await expectRefusal(
        response,
        401,
        "invalid_internal_token",
        `GET ${GET_WEIGHTS_PATH} with a wrong bearer`,
      );
      return undefined;
    },
  },
  {
    id: "weights-slug",
    title:
      "GET /internal/v1/get_weights is 403 challenge_slug_mismatch with a missing or wrong slug",
    async run({ t, subject }) {
      const bearer = { authorization: `Bearer ${t.token}` };
      const cases: [string, Record<string, string>][] = [
        ["no slug header", bearer],
        [
          "another slug",
          { ...bearer, [PLATFORM_HEADERS.challengeSlug]: `${subject.challenge.slug}-other` },
        ],
        [
          "another x-core-challenge-slug",
          { ...bearer, [PLATFORM_HEADERS.coreChallengeSlug]: "another-challenge" },
        ],
      ];
      for (const [what, headers] of cases) {
        const response = await t.fetch(GET_WEIGHTS_PATH, { headers });
        await expectRefusal(
          response,
          403,
          "challenge_slug_mismatch",
          `GET ${GET_WEIGHTS_PATH} with the bearer and ${what}`,
        );
      }
      return undefined;
    },
  },
  {
    id: "weights-shape",
    title:
      "GET /internal/v1/get_weights answers ChallengeWeightsResponse with the bearer and either slug header",
    async run({ t, subject }) {
      for (const slugName of [PLATFORM_HEADERS.challengeSlug, PLATFORM_HEADERS.coreChallengeSlug]) {
        const what = `GET ${GET_WEIGHTS_PATH} with the bearer and ${slugName}`;
        const response = await t.fetch(GET_WEIGHTS_PATH, {
          headers: { authorization: `Bearer ${t.token}`, [slugName]: subject.challenge.slug },
        });
        await expectStatus(response, 200, what);
        const body = await jsonOf(response, what);
        const valid = validateValue(ChallengeWeightsResponse, body, "body");
        if (!valid.ok) {
          const issues = valid.issues.map((i) => `${i.loc.join(".")}: ${i.msg}`).join("; ");
          fail(`${what}: not a ChallengeWeightsResponse (${issues}): ${JSON.stringify(body)}`);
        }
        const { challenge_slug, epoch, weights } = body as {
          challenge_slug: string;
          epoch?: unknown;
          weights: Record<string, number>;
        };
        ensure(
          challenge_slug === subject.challenge.slug,
          `${what}: challenge_slug is ${JSON.stringify(challenge_slug)}, expected "${subject.challenge.slug}"`,
        );
        ensure(
          epoch === null || (Number.isSafeInteger(epoch) && (epoch as number) >= 0),
          `${what}: epoch must be null or a non-negative integer, got ${JSON.stringify(epoch)}`,
        );
        const values = Object.values(weights);
        const bad = Object.entries(weights).filter(([, v]) => !(Number.isFinite(v) && v > 0));
        ensure(
          bad.length === 0,
          `${what}: every weight must be a finite number > 0 (drop the others), got ${JSON.stringify(Object.fromEntries(bad))}`,
        );
        const sum = values.reduce((a, b) => a + b, 0);
        ensure(
          values.length === 0 || Math.abs(sum - 1) < 5e-10,
          `${what}: weights must sum to 1, got ${sum}`,
        );
      }
      return undefined;
    },
  },
  {
    id: "internal-bearer",
    title: "puts every internal route behind the bearer",
    async run(ctx) {
      for (const route of ctx.routes) {
        if (route.access !== "internal" && route.access !== "bridge") continue;
        const method = firstMethod(route);
        const path = concretePath(route.path);
        const none = await ctx.t.fetch(path, { method, headers: slugHeader(ctx) });
        await expectStatus(none, 401, `${method} ${route.path} without a bearer`);
        // Also catches a custom `bearer` check that accepts whatever it is given.
        const wrong = await ctx.t.fetch(path, {
          method,
          headers: { ...slugHeader(ctx), authorization: `Bearer ${ctx.t.token}x` },
        });
        await expectStatus(wrong, 401, `${method} ${route.path} with a wrong bearer`);
      }
      return undefined;
    },
  },
  {
    id: "credential-first",
    title:
      "answers a request without its credential 401 or 403 before reading its body: never a 422",
    async run({ t, routes }) {
      const guarded = routes.filter((route) => route.credential !== "none" && !route.hidden);
      if (guarded.length === 0)
        return { skip: "the challenge has no route that takes a credential" };
      for (const route of guarded) {
        const method = firstMethod(route);
        // Path parameters no schema accepts, and a body no object schema accepts: a route that
        // validated before it authenticated would answer 422 and list its fields.
        const path = `${route.path.replace(/:([A-Za-z_][A-Za-z0-9_]*)[+*?]?/g, "~~")}?limit=x`;
        const { body, headers } = probeBody(route, "[null]");
        const response = await t.fetch(path, { method, headers, body: toBodyInit(body) });
        const what = `${method} ${route.path} without its credential (${route.credential})`;
        ensure(
          response.status === 401 || response.status === 403,
          `${what}: expected 401 or 403 before any validation, got ${response.status} ${await snippet(response)}`,
        );
      }
      return undefined;
    },
  },
  {
    id: "bridge-identity",
    title: "bridge routes refuse a request without a verified identity, whatever X-Hotkey says",
    async run({ t, subject, routes }) {
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
        await expectRefusal(
          response,
          400,
          "missing_verified_identity",
          `${method} ${route.path} with the bearer and a miner's own signature but no verified identity`,
        );
      }
      return undefined;
    },
  },
  {
    id: "validation-422",
    title: "answers invalid input with 422 in FastAPI's exact HTTPValidationError shape",
    async run(ctx) {
      const probe = invalidProbe(ctx);
      ensure(
        probe !== undefined,
        "no route to probe for a 422: give the suite `invalidRequest` in the factory's subject",
      );
      const what = `${probe.method.toUpperCase()} ${probe.path} with invalid input`;
      const response = await send(ctx.t, probe);
      await expectStatus(response, 422, what);
      const type = response.headers.get("content-type") ?? "";
      ensure(
        /^application\/json/.test(type),
        `${what}: expected Content-Type application/json, got ${JSON.stringify(type)}`,
      );
      const body = await jsonOf(response, what);
      const shape = `${what}: expected {"detail":[{"loc":[...],"msg":"...","type":"..."}]}, got ${JSON.stringify(body)}`;
      ensure(isRecord(body) && Object.keys(body).join(",") === "detail", shape);
      const detail = body["detail"];
      ensure(Array.isArray(detail) && detail.length > 0, shape);
      for (const issue of detail) {
        ensure(isRecord(issue) && Object.keys(issue).sort().join(",") === "loc,msg,type", shape);
        const loc = issue["loc"];
        ensure(Array.isArray(loc) && ["body", "query", "path", "header"].includes(loc[0]), shape);
        ensure(
          loc.every((part) => typeof part === "string" || Number.isInteger(part)),
          shape,
        );
        ensure(typeof issue["msg"] === "string" && typeof issue["type"] === "string", shape);
      }
      return undefined;
    },
  },
  {
    id: "signed-unsigned",
    title: "signed routes refuse an unsigned request with 401 missing_signature_headers",
    async run(ctx) {
      const probes = signedProbes(ctx);
      if (probes.length === 0) return NO_SIGNED;
      for (const probe of probes) {
        const response = await ctx.t.fetch(probe.path, {
          method: probe.method,
          headers: probe.headers,
          body: toBodyInit(probe.body),
        });
        await expectRefusal(
          response,
          401,
          "missing_signature_headers",
          `${probe.method} ${probe.path} without a signature`,
        );
      }
      return undefined;
    },
  },
  {
    id: "signed-replay",
    title: "signed routes refuse a replayed nonce with 409 nonce_reused",
    async run(ctx) {
      const probes = signedProbes(ctx);
      if (probes.length === 0) return NO_SIGNED;
      for (const probe of probes) {
        const what = `${probe.method} ${probe.path}`;
        const signed = ctx.t.sign(
          probe.method,
          probe.path,
          probe.body === undefined ? {} : { body: probe.body },
        );
        const init = () => ({
          method: probe.method,
          headers: { ...probe.headers, ...signed },
          body: toBodyInit(probe.body),
        });
        const first = await ctx.t.fetch(probe.path, init());
        if (first.status === 401 || first.status === 409) {
          fail(
            `${what}: a freshly signed request was refused (${first.status} ${await snippet(first)}), so a replay cannot be told apart`,
          );
        }
        await first.body?.cancel();
        const replay = await ctx.t.fetch(probe.path, init());
        await expectRefusal(replay, 409, "nonce_reused", `${what} sent again with the same nonce`);
      }
      return undefined;
    },
  },
  {
    id: "signed-tampered",
    title: "signed routes refuse a tampered request with 401",
    async run(ctx) {
      const probes = signedProbes(ctx);
      if (probes.length === 0) return NO_SIGNED;
      for (const probe of probes) {
        const what = `${probe.method} ${probe.path}`;
        if (probe.body !== undefined && probe.tampered !== undefined) {
          const signed = ctx.t.sign(probe.method, probe.path, { body: probe.body });
          const response = await ctx.t.fetch(probe.path, {
            method: probe.method,
            headers: { ...probe.headers, ...signed },
            body: toBodyInit(probe.tampered),
          });
          await expectRefusal(
            response,
            401,
            "bad_signature",
            `${what} with a body other than the one signed`,
          );
        }
        // The target is signed too: the same headers on another query are refused.
        const join = probe.path.includes("?") ? "&" : "?";
        const signed = ctx.t.sign(
          probe.method,
          `${probe.path}${join}conformance=1`,
          probe.body === undefined ? {} : { body: probe.body },
        );
        const response = await ctx.t.fetch(`${probe.path}${join}conformance=2`, {
          method: probe.method,
          headers: { ...probe.headers, ...signed },
          body: toBodyInit(probe.body),
        });
        await expectRefusal(
          response,
          401,
          "bad_signature",
          `${what} with a query other than the one signed`,
        );
      }
      return undefined;
    },
  },
];

function isSubject<Cfg>(
  value: Challenge<Cfg> | ConformanceSubject<Cfg>,
): value is ConformanceSubject<Cfg> {
  return "challenge" in value && typeof (value as ConformanceSubject<Cfg>).challenge === "object";
}

/** A subject from what the author passed: a challenge, a subject, or a factory of either. */
export async function resolveSubject<Cfg>(
  input: ConformanceInput<Cfg>,
): Promise<ConformanceSubject<Cfg>> {
  const made = typeof input === "function" ? await input() : input;
  return isSubject(made) ? made : { challenge: made };
}

/** Start the subject on `backend` for a run of the checks; `close` stops it and drops its database. */
export async function startSubject(
  subject: ConformanceSubject,
  backend: Backend,
): Promise<{ ctx: CheckContext; close(): Promise<void> }> {
  const t = await startTestChallenge(subject.challenge, { backend, env: subject.env ?? {} });
  return {
    ctx: { backend, t, subject, routes: subject.challenge.routes() },
    close: () => t.close(),
  };
}
