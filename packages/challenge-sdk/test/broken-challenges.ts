// Deliberately broken challenges, one per promise the conformance suite makes, so a test can
// prove the suite notices each breach. Where the SDK cannot be misused into the breach, the
// challenge is wrapped: a fetch in front of the SDK's answers it, or `routes()` misreports a
// route's kind (what a hand-rolled or buggy route kind would look like to the suite).
import {
  type Challenge,
  type ChallengeInstance,
  type ChallengeRouteInfo,
  defineChallenge,
  GET_WEIGHTS_PATH,
  HttpError,
  json,
  Type,
} from "@platform/challenge-sdk";
import type { ConformanceCheckId, ConformanceSubject } from "@platform/challenge-sdk/testing";
import { serve, verifySignedRequest } from "@platform/core";
import { METRICS_PATH } from "../src/service-paths.js";

const HOTKEY = "5DfhGyQdFobKM8NsWvEeAKk5EQQgYe9AydgJ7rMB6E1EqRzV";
const SUBMISSIONS = "/v1/submissions";

/** What the broken variants change in an otherwise conforming challenge. */
interface Breakage {
  /** A public submission route standing in for the signed one (the SDK's is left out). */
  submit?: "accept-anything" | "no-nonce" | "no-verify";
  /** An internal route whose custom bearer check accepts any token. */
  openInternal?: boolean;
  /** The bridge route declared with router.internal (no verified identity required). */
  bridgeAsInternal?: boolean;
  /** The route the 422 probe hits answers with its own, non-FastAPI error body. */
  badValidation?: (request: Request) => Response;
  /** A readiness check (`addReadinessCheck`) that never passes. */
  unready?: boolean;
}

/** A conforming challenge: one route of every kind, each an honest use of the SDK. */
export function conformingChallenge(breakage: Breakage = {}): Challenge {
  const seenNonces = new Set<string>();
  return defineChallenge({
    slug: "conforming",
    version: "1.0.0",
    weights: () => ({ epoch: 3, weights: { [HOTKEY]: 5 } }),
    ...(breakage.unready
      ? {
          setup: ({ addReadinessCheck }) =>
            addReadinessCheck("upstream", () => {
              throw new Error("the upstream is away");
            }),
        }
      : {}),
    routes: (router) => {
      const Submission = Type.Object({ answer: Type.Integer() }, { additionalProperties: false });
      if (!breakage.submit) {
        router.signed({
          method: "POST",
          path: SUBMISSIONS,
          body: Submission,
          handler: ({ miner }) => json({ hotkey: miner.hotkey }, { status: 201 }),
        });
      } else {
        const mode = breakage.submit;
        // A route that checks signatures by hand, each variant forgetting one step.
        router.public({
          method: "POST",
          path: SUBMISSIONS,
          body: "raw",
          handler: ({ request, url, body, slug }) => {
            if (mode === "accept-anything") return json({ stored: true }, { status: 201 });
            const hotkey = request.headers.get("x-hotkey");
            const nonce = request.headers.get("x-nonce");
            if (!hotkey || !nonce || !request.headers.get("x-signature")) {
              throw new HttpError(401, "missing_signature_headers", "Sign the request");
            }
            if (mode === "no-nonce") {
              const verified = verifySignedRequest({
                headers: request.headers,
                method: request.method,
                pathWithQuery: `${url.pathname}${url.search}`,
                body,
                slug,
              });
              if (!verified.ok) throw new HttpError(401, verified.code, verified.message);
            } else {
              if (seenNonces.has(`${hotkey}:${nonce}`))
                throw new HttpError(409, "nonce_reused", "Replay");
              seenNonces.add(`${hotkey}:${nonce}`);
            }
            return json({ stored: true }, { status: 201 });
          },
        });
      }
      router.public({
        method: "GET",
        path: "/v1/items",
        query: Type.Object({ limit: Type.Integer({ maximum: 10 }) }),
        handler: ({ query, request }) => {
          if (breakage.badValidation) return breakage.badValidation(request);
          return { limit: query.limit };
        },
      });
      const bridge = {
        method: "POST" as const,
        path: "/internal/v1/bridge/submissions",
        body: Submission,
        handler: () => json({ stored: true }, { status: 201 }),
      };
      if (breakage.bridgeAsInternal) router.internal(bridge);
      else router.bridge(bridge);
      router.internal({
        method: "POST",
        path: "/internal/v1/attempts/:id/events",
        bearer: (token, { url }) =>
          breakage.openInternal === true || token === `attempt-${url.pathname.split("/")[4]}`,
        handler: () => json({ accepted: 1 }, { status: 202 }),
      });
    },
  });
}

type Interceptor = (
  request: Request,
  instance: ChallengeInstance,
  next: (request: Request) => Promise<Response>,
) => Promise<Response | undefined> | Response | undefined;

/**
 * `challenge` served behind `intercept` (undefined lets the SDK answer), optionally with its
 * routes misreported: the shape of a challenge that bypasses the SDK's route kinds. The SDK's
 * own server is started on a spare loopback port; the front one is what the suite talks to.
 */
export function wrapChallenge(
  challenge: Challenge,
  intercept: Interceptor,
  routes?: (routes: readonly ChallengeRouteInfo[]) => readonly ChallengeRouteInfo[],
): Challenge {
  return {
    ...challenge,
    routes: () => (routes ? routes(challenge.routes()) : challenge.routes()),
    async start(options = {}) {
      const inner = await challenge.start({ ...options, host: "127.0.0.1", port: 0 });
      const { instance } = inner;
      const next = (request: Request) => instance.fetch(request);
      try {
        const server = await serve(
          async (request, env) =>
            (await intercept(request.clone(), instance, next)) ?? instance.fetch(request, env),
          { host: options.host ?? "127.0.0.1", port: options.port ?? 0, log: instance.log },
        );
        return {
          url: server.url,
          host: server.host,
          port: server.port,
          instance,
          async close() {
            try {
              await server.close();
            } finally {
              await inner.close();
            }
          },
        };
      } catch (error) {
        await inner.close();
        throw error;
      }
    },
  };
}

const pathOf = (request: Request) => new URL(request.url).pathname;

/** Answers `path` with `answer` for every method; everything else goes to the SDK. */
function replacing(path: string, answer: (request: Request) => Response): Interceptor {
  return (request) => (pathOf(request) === path ? answer(request) : undefined);
}

/** GET_WEIGHTS_PATH after the SDK has authenticated it, with `body` as the 200 answer. */
function weightsAnswer(body: unknown): Challenge {
  return wrapChallenge(conformingChallenge(), async (request, _instance, next) => {
    if (pathOf(request) !== GET_WEIGHTS_PATH) return undefined;
    const real = await next(request);
    return real.status === 200 ? Response.json(body) : real;
  });
}

/** GET_WEIGHTS_PATH with the request's credentials rewritten before the SDK sees them. */
function weightsRewriting(rewrite: (headers: Headers, instance: ChallengeInstance) => void) {
  return wrapChallenge(conformingChallenge(), (request, instance, next) => {
    if (pathOf(request) !== GET_WEIGHTS_PATH) return undefined;
    const headers = new Headers(request.headers);
    rewrite(headers, instance);
    return next(new Request(request.url, { headers }));
  });
}

function withSdkDocument(edit: (doc: Record<string, unknown>) => void): Challenge {
  const inner = conformingChallenge();
  return wrapChallenge(
    inner,
    replacing("/openapi.json", () => {
      const doc = structuredClone(inner.openapi()) as unknown as Record<string, unknown>;
      edit(doc);
      return Response.json(doc);
    }),
  );
}

const tokenOf = (instance: ChallengeInstance) => instance.settings.challengeToken ?? "";
const VALID_ISSUE = { loc: ["query", "limit"], msg: "Expected integer", type: "integer" };

/** One broken challenge and exactly the checks it must fail. */
export interface BrokenCase {
  name: string;
  subject: () => ConformanceSubject;
  fails: ConformanceCheckId[];
}

const plain =
  (challenge: Challenge, extra: Partial<ConformanceSubject> = {}) =>
  () => ({
    challenge,
    ...extra,
  });
const submission = { method: "POST", path: SUBMISSIONS, json: { answer: 42 } };

export const BROKEN_CASES: BrokenCase[] = [
  {
    name: "an unsigned submit accepted (a public route listed as signed)",
    subject: () => ({
      challenge: wrapChallenge(
        conformingChallenge({ submit: "accept-anything" }),
        () => undefined,
        (routes) =>
          routes.map((r) => (r.path === SUBMISSIONS ? { ...r, access: "signed" as const } : r)),
      ),
    }),
    fails: ["signed-unsigned", "signed-replay", "signed-tampered"],
  },
  {
    name: "an unsigned submit accepted (the author's public submit route)",
    subject: plain(conformingChallenge({ submit: "accept-anything" }), {
      signedRequests: [submission],
    }),
    fails: ["signed-unsigned", "signed-replay", "signed-tampered"],
  },
  {
    name: "a replayed nonce accepted (signature checked, nonce never spent)",
    subject: plain(conformingChallenge({ submit: "no-nonce" }), { signedRequests: [submission] }),
    fails: ["signed-replay"],
  },
  {
    name: "a tampered request accepted (nonce spent, signature never verified)",
    subject: plain(conformingChallenge({ submit: "no-verify" }), { signedRequests: [submission] }),
    fails: ["signed-tampered"],
  },
  ...(
    [
      ["not normalised", { challenge_slug: "conforming", epoch: 3, weights: { [HOTKEY]: 5 } }],
      ["a zero weight", { challenge_slug: "conforming", epoch: 3, weights: { [HOTKEY]: 1, x: 0 } }],
      [
        "a negative weight",
        { challenge_slug: "conforming", epoch: 3, weights: { [HOTKEY]: 2, x: -1 } },
      ],
      ["weights as a list", { challenge_slug: "conforming", epoch: 3, weights: [[HOTKEY, 1]] }],
      [
        "a weight as a string",
        { challenge_slug: "conforming", epoch: 3, weights: { [HOTKEY]: "1" } },
      ],
      ["no challenge_slug", { epoch: 3, weights: { [HOTKEY]: 1 } }],
      ["another challenge_slug", { challenge_slug: "other", epoch: 3, weights: { [HOTKEY]: 1 } }],
      ["no epoch", { challenge_slug: "conforming", weights: { [HOTKEY]: 1 } }],
      ["a negative epoch", { challenge_slug: "conforming", epoch: -1, weights: { [HOTKEY]: 1 } }],
      [
        "an epoch as a string",
        { challenge_slug: "conforming", epoch: "3", weights: { [HOTKEY]: 1 } },
      ],
      ["a bare weights record", { [HOTKEY]: 1 }],
    ] as const
  ).map(
    ([what, body]): BrokenCase => ({
      name: `a wrong weights shape: ${what}`,
      subject: plain(weightsAnswer(body)),
      fails: ["weights-shape"],
    }),
  ),
  {
    name: "get_weights answered without a bearer",
    subject: plain(
      weightsRewriting((headers, instance) => {
        if (!headers.has("authorization"))
          headers.set("authorization", `Bearer ${tokenOf(instance)}`);
      }),
    ),
    // get_weights is an internal route too: the sweep over every internal route sees it.
    fails: ["weights-no-bearer", "internal-bearer"],
  },
  {
    name: "get_weights answered with any bearer",
    subject: plain(
      weightsRewriting((headers, instance) => {
        if (headers.has("authorization"))
          headers.set("authorization", `Bearer ${tokenOf(instance)}`);
      }),
    ),
    fails: ["weights-wrong-bearer", "internal-bearer"],
  },
  {
    name: "get_weights answered whatever slug the headers name",
    subject: plain(
      weightsRewriting((headers, instance) => {
        headers.set("x-platform-challenge-slug", instance.slug);
        headers.delete("x-core-challenge-slug");
      }),
    ),
    fails: ["weights-slug"],
  },
  {
    name: "an internal route whose custom bearer check accepts any token",
    subject: plain(conformingChallenge({ openInternal: true })),
    fails: ["internal-bearer"],
  },
  {
    name: "an internal route answered without any bearer",
    subject: plain(
      wrapChallenge(
        conformingChallenge(),
        replacing("/internal/v1/attempts/1/events", () => json({ accepted: 1 }, { status: 202 })),
      ),
    ),
    fails: ["internal-bearer"],
  },
  {
    name: "a route that validates its input before its credential (listed with a bearer)",
    subject: plain(
      wrapChallenge(
        conformingChallenge(),
        () => undefined,
        (routes) =>
          routes.map((r) => (r.path === "/v1/items" ? { ...r, credential: "bearer" as const } : r)),
      ),
    ),
    fails: ["credential-first"],
  },
  {
    name: "a bridge route that takes X-Hotkey on trust (declared internal, listed as bridge)",
    subject: () => ({
      challenge: wrapChallenge(
        conformingChallenge({ bridgeAsInternal: true }),
        () => undefined,
        (routes) =>
          routes.map((r) =>
            r.path === "/internal/v1/bridge/submissions" ? { ...r, access: "bridge" as const } : r,
          ),
      ),
    }),
    fails: ["bridge-identity"],
  },
  ...(
    [
      ["400 instead of 422", () => Response.json({ detail: [VALID_ISSUE] }, { status: 400 })],
      ["detail as a string", () => Response.json({ detail: "limit is too big" }, { status: 422 })],
      ["an empty detail", () => Response.json({ detail: [] }, { status: 422 })],
      [
        "a key beside detail",
        () => Response.json({ detail: [VALID_ISSUE], code: "invalid" }, { status: 422 }),
      ],
      [
        "an issue without type",
        () => Response.json({ detail: [{ loc: ["query", "limit"], msg: "bad" }] }, { status: 422 }),
      ],
      [
        "loc as a string",
        () => Response.json({ detail: [{ ...VALID_ISSUE, loc: "query.limit" }] }, { status: 422 }),
      ],
      [
        "loc outside body, query, path and header",
        () =>
          Response.json({ detail: [{ ...VALID_ISSUE, loc: ["cookie", "x"] }] }, { status: 422 }),
      ],
      [
        "a text body",
        () =>
          new Response(JSON.stringify({ detail: [VALID_ISSUE] }), {
            status: 422,
            headers: { "content-type": "text/plain" },
          }),
      ],
    ] as const
  ).map(
    ([what, answer]): BrokenCase => ({
      name: `a validation error in the wrong shape: ${what}`,
      // The route validates nothing itself; the probe is a valid query answered as if invalid.
      subject: plain(conformingChallenge({ badValidation: answer }), {
        invalidRequest: { method: "GET", path: "/v1/items?limit=5" },
      }),
      fails: ["validation-422"],
    }),
  ),
  {
    name: "no route the suite can probe for a 422 and no invalidRequest",
    subject: plain(
      defineChallenge({
        slug: "conforming",
        version: "1.0.0",
        weights: () => ({}),
        routes: (router) =>
          router.public({ method: "GET", path: "/v1/ping", handler: () => "pong" }),
      }),
    ),
    fails: ["validation-422"],
  },
  {
    name: "GET /health that never asks the database",
    subject: plain(
      wrapChallenge(
        conformingChallenge(),
        replacing("/health", () => Response.json({ status: "ok" })),
      ),
    ),
    fails: ["health"],
  },
  {
    name: "GET /health naming another backend",
    subject: plain(
      wrapChallenge(conformingChallenge(), async (request, _instance, next) => {
        if (pathOf(request) !== "/health") return undefined;
        const body = (await (await next(request)).json()) as { database: { backend: string } };
        body.database.backend = body.database.backend === "pglite" ? "postgres" : "pglite";
        return Response.json(body);
      }),
    ),
    fails: ["health"],
  },
  ...(
    [
      ["an extra field", (body: Record<string, unknown>) => Object.assign(body, { name: "x" })],
      ["no sdk_version", (body: Record<string, unknown>) => delete body["sdk_version"]],
      [
        "no proxy_routes capability",
        (body: Record<string, unknown>) => Object.assign(body, { capabilities: ["get_weights"] }),
      ],
      [
        "another version",
        (body: Record<string, unknown>) => Object.assign(body, { challenge_version: "9" }),
      ],
    ] as const
  ).map(
    ([what, edit]): BrokenCase => ({
      name: `GET /version with ${what}`,
      subject: plain(
        wrapChallenge(conformingChallenge(), async (request, _instance, next) => {
          if (pathOf(request) !== "/version") return undefined;
          const body = (await (await next(request)).json()) as Record<string, unknown>;
          edit(body);
          return Response.json(body);
        }),
      ),
      fails: ["version"],
    }),
  ),
  {
    name: "an OpenAPI 3.0 document",
    subject: plain(withSdkDocument((doc) => Object.assign(doc, { openapi: "3.0.3" }))),
    fails: ["openapi"],
  },
  {
    name: "an OpenAPI document missing a public route",
    subject: plain(
      withSdkDocument((doc) => {
        delete (doc["paths"] as Record<string, unknown>)["/v1/items"];
      }),
    ),
    fails: ["openapi"],
  },
  {
    name: "a readiness check that never passes",
    subject: plain(conformingChallenge({ unready: true })),
    fails: ["readiness"],
  },
  {
    name: "GET /livez answered 500",
    subject: plain(
      wrapChallenge(conformingChallenge(), async (request) =>
        pathOf(request) === "/livez" ? new Response("down", { status: 500 }) : undefined,
      ),
    ),
    fails: ["readiness"],
  },
  {
    name: "metrics served without the challenge token",
    subject: plain(
      wrapChallenge(conformingChallenge(), async (request, instance) =>
        pathOf(request) === METRICS_PATH
          ? instance.fetch(
              new Request(request.url, {
                headers: { authorization: `Bearer ${instance.settings.challengeToken}` },
              }),
            )
          : undefined,
      ),
    ),
    // The internal routes' bearer checks probe the metrics route too.
    fails: ["internal-bearer", "credential-first", "metrics"],
  },
  {
    name: "a challenge whose setup fails",
    subject: plain(
      defineChallenge({
        slug: "conforming",
        version: "1.0.0",
        weights: () => ({}),
        setup: () => {
          throw new Error("setup exploded");
        },
      }),
    ),
    fails: ["start"],
  },
];
