// An internal route's `slugHeader: "if-sent"`: the bearer alone is enough (a cron or a worker
// calling process-next), a slug header that is sent must still name this challenge, and the
// default ("required") and the SDK's own get_weights keep requiring one.
import { defineChallenge, GET_WEIGHTS_PATH } from "@platform/challenge-sdk";
import { PLATFORM_HEADERS } from "@platform/challenge-sdk/proxy-contract";
import { startTestChallenge, type TestChallenge } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const challenge = defineChallenge({
  slug: "cron-called",
  version: "1.0.0",
  routes: (router) => {
    router.internal({
      method: "POST",
      path: "/internal/v1/worker/process-next",
      slugHeader: "if-sent",
      handler: () => ({ ran: true }),
    });
    router.internal({
      method: "POST",
      path: "/internal/v1/strict",
      handler: () => ({ ran: true }),
    });
  },
  weights: () => ({}),
});

describe("internal routes with slugHeader", () => {
  let t: TestChallenge;
  beforeAll(async () => {
    t = await startTestChallenge(challenge);
  });
  afterAll(() => t?.close());

  const post = (path: string, headers: Record<string, string>) =>
    t.fetch(path, { method: "POST", headers });
  const bearer = () => ({ authorization: `Bearer ${t.token}` });

  it('"if-sent" accepts the bearer alone and still refuses a wrong slug or bearer', async () => {
    const alone = await post("/internal/v1/worker/process-next", bearer());
    expect(alone.status).toBe(200);
    expect(await alone.json()).toEqual({ ran: true });
    expect((await post("/internal/v1/worker/process-next", t.internalHeaders)).status).toBe(200);

    const wrong = await post("/internal/v1/worker/process-next", {
      ...bearer(),
      [PLATFORM_HEADERS.coreChallengeSlug]: "another",
    });
    expect(wrong.status).toBe(403);
    expect(await wrong.json()).toMatchObject({ code: "challenge_slug_mismatch" });

    const noBearer = await post("/internal/v1/worker/process-next", {
      [PLATFORM_HEADERS.challengeSlug]: t.slug,
    });
    expect(noBearer.status).toBe(401);
    expect(await noBearer.json()).toMatchObject({ code: "invalid_internal_token" });
  });

  it("the default and get_weights still require the slug header", async () => {
    const strict = await post("/internal/v1/strict", bearer());
    expect(strict.status).toBe(403);
    expect(await strict.json()).toMatchObject({ code: "challenge_slug_mismatch" });
    expect((await post("/internal/v1/strict", t.internalHeaders)).status).toBe(200);
    const weights = await t.fetch(GET_WEIGHTS_PATH, { headers: bearer() });
    expect(weights.status).toBe(403);
  });

  it("is refused where it does not belong", () => {
    // Block bodies: inferring expect's type from a whole Challenge is too deep for TypeScript.
    expect(() => {
      defineChallenge({
        slug: "misplaced",
        version: "1.0.0",
        routes: (router) => {
          // What a JavaScript caller could write; TypeScript refuses it already.
          const untyped = router.public as unknown as (route: Record<string, unknown>) => void;
          untyped({ method: "GET", path: "/v1/x", slugHeader: "if-sent", handler: () => null });
        },
        weights: () => ({}),
      });
    }).toThrow(/slugHeader belongs on an internal route/);
    expect(() => {
      defineChallenge({
        slug: "misspelt",
        version: "1.0.0",
        routes: (router) => {
          const untyped = router.internal as unknown as (route: Record<string, unknown>) => void;
          untyped({
            method: "POST",
            path: "/internal/v1/x",
            slugHeader: "optional",
            handler: () => null,
          });
        },
        weights: () => ({}),
      });
    }).toThrow(/"required" or "if-sent"/);
  });
});
