// A route's `bearer` check that resolves the token to the record it opens: the record is the
// handler's `ctx.bearer` (typed from the check, no cast); a refusal is 401 with the route's code,
// or whatever HttpError the check throws (403, 410); and it all happens before the body is read.
// Tokens are the SDK's capability tokens, their hashes held by the challenge's state.
import { randomBytes } from "node:crypto";
import { type BearerCheck, defineChallenge, HttpError, Type } from "@platform/challenge-sdk";
import { PLATFORM_HEADERS } from "@platform/challenge-sdk/proxy-contract";
import {
  runChallengeConformance,
  startTestChallenge,
  type TestChallenge,
} from "@platform/challenge-sdk/testing";
import {
  issueCapabilityToken,
  readCapabilityToken,
  verifyCapabilityToken,
} from "@platform/challenge-sdk/tokens";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

interface Run {
  id: string;
  state: "running" | "watching" | "cancelled";
  tokenHash: string;
}

interface RunsState {
  key: Buffer;
  runs: Map<string, Run>;
  /** How many requests reached a handler (a refused one must not). */
  handled: number;
}

const SCOPE = "bearer-records/run/v1";
const RunParams = Type.Object({ run_id: Type.String({ pattern: "^[a-z0-9]+$" }) });
const Progress = Type.Object(
  { step: Type.Integer({ minimum: 0 }) },
  { additionalProperties: false },
);

/** The run the path names, if the token is its live token; cancelled runs are 410, watchers 403. */
const runBearer: BearerCheck<unknown, RunsState, Run | null> = (token, { state, pathParams }) => {
  const runId = pathParams["run_id"] ?? "";
  if (readCapabilityToken(token)?.id !== runId) return null;
  const run = state.runs.get(runId);
  const verdict = verifyCapabilityToken(token, {
    key: state.key,
    scope: SCOPE,
    id: runId,
    storedHash: run?.tokenHash,
  });
  if (!verdict.ok || run === undefined) return null;
  if (run.state === "cancelled") {
    throw new HttpError(410, "capability_revoked", `Run ${run.id} was cancelled.`);
  }
  return run;
};

const challenge = defineChallenge({
  slug: "bearer-records",
  version: "1.0.0",
  setup: (): RunsState => ({ key: randomBytes(32), runs: new Map(), handled: 0 }),
  weights: () => ({}),
  routes: (router) => {
    router.public({
      method: "GET",
      path: "/v1/runs/:run_id",
      params: RunParams,
      bearer: runBearer,
      handler: ({ bearer, state }) => {
        state.handled++;
        // Typed by the check: a Run, no cast.
        return { id: bearer.id, state: bearer.state };
      },
    });

    router.public({
      method: "POST",
      path: "/v1/runs/:run_id/progress",
      params: RunParams,
      body: Progress,
      bearer: async (token, info) => {
        const run = await runBearer(token, info);
        if (run?.state === "watching") {
          throw new HttpError(403, "read_only_run", "A watcher's token cannot write.");
        }
        return run;
      },
      handler: ({ bearer, body, state }) => {
        state.handled++;
        return { id: bearer.id, step: body.step };
      },
    });

    // A refusal in the route's own words.
    router.public({
      method: "GET",
      path: "/v1/sessions/:run_id",
      params: RunParams,
      bearer: runBearer,
      bearerRefusal: { code: "invalid_session", message: "The session is unknown or over." },
      handler: ({ bearer }) => ({ id: bearer.id }),
    });

    // An internal route's own bearer: the record, and still the slug header.
    router.internal({
      method: "POST",
      path: "/internal/v1/runs/:run_id/events",
      params: RunParams,
      body: Progress,
      bearer: runBearer,
      handler: ({ bearer, body }) => ({ id: bearer.id, step: body.step }),
    });

    // `true` still accepts; the handler then gets `true`.
    router.public({
      method: "GET",
      path: "/v1/open",
      bearer: (token) => token === "open-sesame-0123",
      handler: ({ bearer }) => ({ bearer }),
    });

    // A check that answers neither a record nor a verdict: a bug, refused (never accepted).
    router.public({
      method: "GET",
      path: "/v1/buggy",
      bearer: (() => "yes") as unknown as BearerCheck,
      handler: () => ({ reached: true }),
    });

    router.public({
      method: "GET",
      path: "/v1/plain",
      query: Type.Object({ limit: Type.Optional(Type.Integer()) }),
      handler: (ctx) => {
        // @ts-expect-error a route without a bearer check has no ctx.bearer
        return { bearer: ctx.bearer ?? null };
      },
    });
  },
});

describe("bearer checks that resolve a record", () => {
  let t: TestChallenge;
  let state: RunsState;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    t = await startTestChallenge(challenge);
    state = t.runtime.state as RunsState;
    for (const [id, runState] of [
      ["r1", "running"],
      ["r2", "running"],
      ["w1", "watching"],
      ["c1", "cancelled"],
    ] as const) {
      const issued = issueCapabilityToken({ key: state.key, scope: SCOPE, id });
      state.runs.set(id, { id, state: runState, tokenHash: issued.hash });
      tokens[id] = issued.token;
    }
  });
  afterAll(() => t?.close());

  const auth = (token: string | undefined): Record<string, string> =>
    token === undefined ? {} : { authorization: `Bearer ${token}` };
  const post = (path: string, token: string | undefined, body: string) =>
    t.fetch(path, {
      method: "POST",
      headers: { "content-type": "application/json", ...auth(token) },
      body,
    });
  const refusal = async (response: Response) => ({
    status: response.status,
    ...((await response.json()) as { code: string; detail: string }),
  });

  it("puts the record the check resolved on ctx.bearer", async () => {
    const response = await t.fetch("/v1/runs/r1", { headers: auth(tokens["r1"]) });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ id: "r1", state: "running" });
    const written = await post("/v1/runs/r2/progress", tokens["r2"], '{"step":3}');
    expect(await written.json()).toEqual({ id: "r2", step: 3 });
  });

  it("refuses a missing, wrong, other run's or revoked token with 401 invalid_token", async () => {
    const other = issueCapabilityToken({ key: randomBytes(32), scope: SCOPE, id: "r1" }).token;
    const handled = state.handled;
    for (const token of [undefined, "nope", tokens["r2"], other, `${tokens["r1"]}x`]) {
      const response = await t.fetch("/v1/runs/r1", { headers: auth(token) });
      expect(await refusal(response)).toMatchObject({ status: 401, code: "invalid_token" });
      expect(response.headers.get("www-authenticate")).toBe("Bearer");
    }
    // Revoked: the stored hash replaced.
    const run = state.runs.get("r2")!;
    const stored = run.tokenHash;
    run.tokenHash = "0".repeat(64);
    try {
      const response = await t.fetch("/v1/runs/r2", { headers: auth(tokens["r2"]) });
      expect(await refusal(response)).toMatchObject({ status: 401, code: "invalid_token" });
    } finally {
      run.tokenHash = stored;
    }
    expect(state.handled).toBe(handled);
  });

  it("answers a refusal with the route's own code and message", async () => {
    const wrong = await t.fetch("/v1/sessions/r1", { headers: auth(tokens["r2"]) });
    expect(await refusal(wrong)).toEqual({
      status: 401,
      code: "invalid_session",
      detail: "The session is unknown or over.",
    });
    const missing = await t.fetch("/v1/sessions/r1");
    expect(await refusal(missing)).toMatchObject({ status: 401, code: "invalid_session" });
    const ok = await t.fetch("/v1/sessions/r1", { headers: auth(tokens["r1"]) });
    expect(await ok.json()).toEqual({ id: "r1" });
  });

  it("answers the HttpError a check throws: 410 for a revoked record, 403 for a forbidden use", async () => {
    const revoked = await t.fetch("/v1/runs/c1", { headers: auth(tokens["c1"]) });
    expect(await refusal(revoked)).toMatchObject({ status: 410, code: "capability_revoked" });
    const forbidden = await post("/v1/runs/w1/progress", tokens["w1"], '{"step":1}');
    expect(await refusal(forbidden)).toMatchObject({ status: 403, code: "read_only_run" });
    // The watcher may still read.
    const read = await t.fetch("/v1/runs/w1", { headers: auth(tokens["w1"]) });
    expect(await read.json()).toEqual({ id: "w1", state: "watching" });
  });

  it("judges the bearer before the body: an invalid body with a bad token is 401, not 422", async () => {
    for (const body of ["{not json", '{"step":-1}', '{"step":1,"extra":true}']) {
      const bad = await post("/v1/runs/r1/progress", "nope", body);
      expect(await refusal(bad)).toMatchObject({ status: 401, code: "invalid_token" });
      const none = await post("/v1/runs/r1/progress", undefined, body);
      expect(none.status).toBe(401);
      // A revoked or forbidden token learns nothing about the schema either.
      const revoked = await post("/v1/runs/c1/progress", tokens["c1"], body);
      expect(revoked.status).toBe(410);
      const forbidden = await post("/v1/runs/w1/progress", tokens["w1"], body);
      expect(forbidden.status).toBe(403);
      // Only the holder of the live token is told what is wrong with the body.
      const valid = await post("/v1/runs/r1/progress", tokens["r1"], body);
      expect(valid.status).toBe(422);
    }
    // Nor is a path parameter validated first: the check refuses it.
    const path = await t.fetch("/v1/runs/NOT-VALID", { headers: auth("nope") });
    expect(path.status).toBe(401);
  });

  it("gives an internal route's own bearer record to its handler, after the slug check", async () => {
    const send = (headers: Record<string, string>) =>
      t.fetch("/internal/v1/runs/r1/events", {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: '{"step":2}',
      });
    const slug = { [PLATFORM_HEADERS.challengeSlug]: t.slug };
    const ok = await send({ ...slug, ...auth(tokens["r1"]) });
    expect(await ok.json()).toEqual({ id: "r1", step: 2 });
    expect(await refusal(await send({ ...slug, ...auth(tokens["r2"]) }))).toMatchObject({
      status: 401,
      code: "invalid_internal_token",
    });
    // The challenge token is not this route's credential.
    expect((await send(t.internalHeaders)).status).toBe(401);
    expect(await refusal(await send(auth(tokens["r1"])))).toMatchObject({
      status: 403,
      code: "challenge_slug_mismatch",
    });
  });

  it("keeps `true` working: accepted, and ctx.bearer is true", async () => {
    const ok = await t.fetch("/v1/open", { headers: auth("open-sesame-0123") });
    expect(await ok.json()).toEqual({ bearer: true });
    expect((await t.fetch("/v1/open", { headers: auth("closed") })).status).toBe(401);
    const plain = await t.fetch("/v1/plain", { headers: auth("open-sesame-0123") });
    expect(await plain.json()).toEqual({ bearer: null });
  });

  it("never accepts what a buggy check answers (neither a record nor a verdict): 500", async () => {
    const response = await t.fetch("/v1/buggy", { headers: auth("anything") });
    expect(await refusal(response)).toMatchObject({ status: 500, code: "internal_error" });
  });

  it("documents each bearer route's 401 code in the OpenAPI document", async () => {
    const document = (await (await t.fetch("/openapi.json")).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>>;
    };
    const responses = (path: string, method: string) => document.paths[path]?.[method]?.responses;
    expect(responses("/v1/runs/{run_id}", "get")?.["401"]?.description).toBe("invalid_token");
    expect(responses("/v1/sessions/{run_id}", "get")?.["401"]?.description).toBe("invalid_session");
    expect(responses("/internal/v1/runs/{run_id}/events", "post")?.["401"]?.description).toBe(
      "invalid_internal_token",
    );
    expect(responses("/v1/plain", "get")?.["401"]).toBeUndefined();
  });

  it("lists every bearer route's credential as `bearer`", () => {
    const credentials = Object.fromEntries(
      challenge.routes().map((route) => [route.path, route.credential]),
    );
    expect(credentials).toMatchObject({
      "/v1/runs/:run_id": "bearer",
      "/v1/sessions/:run_id": "bearer",
      "/internal/v1/runs/:run_id/events": "bearer",
      "/v1/plain": "none",
    });
  });
});

// The conformance suite on the same challenge: every bearer route refuses a request without
// its credential before its body (credential-first), every internal route needs a bearer.
runChallengeConformance("bearer-records", () => ({
  challenge,
  invalidRequest: { method: "GET", path: "/v1/plain?limit=x" },
}));
