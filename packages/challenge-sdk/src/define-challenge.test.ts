import {
  type Database,
  generateMnemonic,
  initCrypto,
  keypairFromMnemonic,
  signRequest,
} from "@platform/core";
import { createTestDatabase } from "@platform/core/testing";
import { Type } from "@sinclair/typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "./challenge-config.js";
import type { StartOptions } from "./challenge-instance.js";
import { type Challenge, defineChallenge } from "./define-challenge.js";
import type { WeightsResult } from "./service-routes.js";

const TOKEN = "ct_0123456789abcdefghijklmnopqrstuvwxyz";
const env = { CHALLENGE_TOKEN: TOKEN, LOG_LEVEL: "silent" };
const internal = { authorization: `Bearer ${TOKEN}`, "x-platform-challenge-slug": "unit" };

function weightsChallenge(weights: () => WeightsResult | Promise<WeightsResult>) {
  return defineChallenge({ slug: "unit", version: "0.1.0", weights });
}

/** Start on a free loopback port; the tests talk to `instance.fetch`, in-process. */
function startOn<Cfg, State>(challenge: Challenge<Cfg, State>, options: StartOptions) {
  return challenge.start({ host: "127.0.0.1", port: 0, ...options });
}

describe("defineChallenge checks its definition", () => {
  it("refuses a bad slug, the reserved slug, a missing version or weights", () => {
    const weights = () => ({});
    // A block body: vitest's types for expect(() => challenge) instantiate too deeply.
    const define = (definition: Parameters<typeof defineChallenge>[0]) => () => {
      defineChallenge(definition);
    };
    expect(define({ slug: "Bad_Slug", version: "1", weights })).toThrow(/slug/);
    expect(define({ slug: "-x", version: "1", weights })).toThrow(/slug/);
    expect(define({ slug: "sdk", version: "1", weights })).toThrow(/reserved/);
    expect(define({ slug: "ok", version: " ", weights })).toThrow(/version/);
    expect(define({ slug: "ok", version: "1" } as never)).toThrow(/weights/);
    expect(() => {
      defineChallenge({
        slug: "ok",
        version: "1",
        weights,
        config: Type.Object({ PORT: Type.String() }),
      });
    }).toThrow(/PORT/);
  });

  it("lists its routes and capabilities before any init", () => {
    const challenge = defineChallenge({
      slug: "unit",
      version: "1",
      capabilities: ["proxy_routes", "extra"],
      weights: () => ({}),
      routes: (r) =>
        r.signed({ method: "POST", path: "/v1/x", body: Type.Object({}), handler: () => 1 }),
    });
    expect(challenge.capabilities).toEqual(["get_weights", "proxy_routes", "extra"]);
    expect(
      challenge.routes().map((r) => `${r.access} ${r.methods.join(",")} ${r.path} ${r.body}`),
    ).toEqual([
      "service GET /health none",
      "service GET /livez none",
      "service GET /readyz none",
      "service GET /version none",
      "internal GET /internal/v1/get_weights none",
      "internal GET /internal/v1/metrics none",
      "signed POST /v1/x json",
      "service GET /openapi.json none",
    ]);
    expect(challenge.openapi().paths["/v1/x"]).toBeDefined();
  });

  it("publishes its named records under components.schemas and refuses clashing names", () => {
    const Item = Type.Object({ id: Type.Integer(), hotkey: Type.String() });
    const challenge = defineChallenge({
      slug: "unit",
      version: "0.1.0",
      schemas: { SubmissionListItem: Item },
      weights: () => ({}),
    });
    const schemas = (challenge.openapi().components as { schemas: Record<string, unknown> })
      .schemas;
    expect(schemas.SubmissionListItem).toEqual(JSON.parse(JSON.stringify(Item)));
    expect(schemas.HTTPValidationError).toBeDefined();
    const define = (name: string) => () =>
      defineChallenge({
        slug: "unit",
        version: "0.1.0",
        schemas: { [name]: Item },
        weights: () => ({}),
      });
    expect(define("HTTPValidationError")).toThrow(/SDK's own/);
    expect(define("bad name/x")).toThrow(/must match/);
  });

  it("answers 503 challenge_not_started once closed", async () => {
    const challenge = weightsChallenge(() => ({}));
    const running = await startOn(challenge, { env, memory: true });
    expect((await running.instance.fetch(new Request("http://x/health"))).status).toBe(200);
    await running.close();
    const response = await running.instance.fetch(new Request("http://x/health"));
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ code: "challenge_not_started" });
  });

  it("throws the ConfigError before opening anything", async () => {
    const challenge = weightsChallenge(() => ({}));
    await expect(startOn(challenge, { env: {}, memory: true })).rejects.toBeInstanceOf(ConfigError);
  });
});

describe("a challenge on a database it was given", () => {
  let db: Database;
  beforeAll(async () => {
    db = await createTestDatabase({ backend: "pglite" });
  });
  afterAll(() => db?.close());

  it("cleans and normalises what weights() returns, with or without an epoch", async () => {
    const cases: [WeightsResult, unknown][] = [
      [
        { a: 2, b: 6, c: 0, d: -1, e: Number.NaN },
        { epoch: null, weights: { a: 0.25, b: 0.75 } },
      ],
      [
        { epoch: 3, weights: { a: 1 } },
        { epoch: 3, weights: { a: 1 } },
      ],
      [
        { epoch: null, weights: {} },
        { epoch: null, weights: {} },
      ],
      [{ weights: { x: 5 } }, { epoch: null, weights: { x: 1 } }],
    ];
    for (const [result, expected] of cases) {
      const running = await startOn(
        weightsChallenge(async () => result),
        { env, db },
      );
      const response = await running.instance.fetch(
        new Request("http://x/internal/v1/get_weights", { headers: internal }),
      );
      expect(await response.json()).toEqual({ challenge_slug: "unit", ...(expected as object) });
      await running.close();
    }
  });

  it("answers 500 without internals when weights() fails or returns a bad epoch", async () => {
    for (const weights of [
      () => {
        throw new Error("secret detail");
      },
      () => ({ epoch: -1, weights: {} }),
      () => ({ epoch: 1.5, weights: {} }),
      () => null as never,
    ]) {
      const running = await startOn(weightsChallenge(weights), { env, db });
      const response = await running.instance.fetch(
        new Request("http://x/internal/v1/get_weights", { headers: internal }),
      );
      expect(response.status).toBe(500);
      const text = await response.text();
      expect(JSON.parse(text)).toMatchObject({ code: "internal_error" });
      expect(text).not.toContain("secret detail");
      await running.close();
    }
  });

  it("does not close a database it was given", async () => {
    const running = await startOn(
      weightsChallenge(() => ({})),
      { env, db },
    );
    await running.close();
    await running.close();
    expect(await db.sql`select 1 as one`).toEqual([{ one: 1 }]);
  });

  it("with allowNoToken, internal routes take no bearer but still need the slug", async () => {
    const running = await startOn(
      weightsChallenge(() => ({})),
      {
        env: { LOG_LEVEL: "silent" },
        db,
        allowNoToken: true,
      },
    );
    const url = "http://x/internal/v1/get_weights";
    expect(
      (
        await running.instance.fetch(
          new Request(url, { headers: { "x-platform-challenge-slug": "unit" } }),
        )
      ).status,
    ).toBe(200);
    expect((await running.instance.fetch(new Request(url))).status).toBe(403);
    await running.close();
  });

  it("with internalWithoutToken 'unavailable', internal routes answer 503 when no token is configured", async () => {
    const challenge = defineChallenge({
      slug: "unit",
      version: "0.1.0",
      internalWithoutToken: "unavailable",
      weights: () => ({}),
    });
    const running = await startOn(challenge, {
      env: { LOG_LEVEL: "silent" },
      db,
      allowNoToken: true,
    });
    const response = await running.instance.fetch(
      new Request("http://x/internal/v1/get_weights", {
        headers: { "x-platform-challenge-slug": "unit", authorization: "Bearer anything" },
      }),
    );
    expect(response.status).toBe(503);
    expect(((await response.json()) as { code: string }).code).toBe("internal_auth_unconfigured");
    // Public routes are unaffected.
    expect((await running.instance.fetch(new Request("http://x/health"))).status).toBe(200);
    await running.close();
    // With a token configured the option changes nothing: the bearer is checked as always.
    const withToken = await startOn(challenge, { env, db });
    const url = "http://x/internal/v1/get_weights";
    expect((await withToken.instance.fetch(new Request(url, { headers: internal }))).status).toBe(
      200,
    );
    expect(
      (
        await withToken.instance.fetch(
          new Request(url, { headers: { ...internal, authorization: "Bearer wrong" } }),
        )
      ).status,
    ).toBe(401);
    await withToken.close();
  });

  it("runs several instances of one definition side by side", async () => {
    const other = await createTestDatabase({ backend: "pglite" });
    try {
      const challenge = defineChallenge({
        slug: "unit",
        version: "1",
        migrations: [{ version: 1, name: "marks", sql: "create table unit_marks (v text)" }],
        weights: async ({ sql }) =>
          Object.fromEntries(
            (await sql<{ v: string }[]>`select v from unit_marks`).map((r) => [r.v, 1]),
          ),
      });
      const one = await startOn(challenge, { env, db });
      const two = await startOn(challenge, { env, db: other });
      await one.instance.sql`insert into unit_marks values ('one')`;
      await two.instance.sql`insert into unit_marks values ('two')`;
      const read = async (running: typeof one) =>
        (await (
          await running.instance.fetch(
            new Request("http://x/internal/v1/get_weights", { headers: internal }),
          )
        ).json()) as {
          weights: Record<string, number>;
        };
      expect((await read(one)).weights).toEqual({ one: 1 });
      expect((await read(two)).weights).toEqual({ two: 1 });
      await one.close();
      await two.close();
    } finally {
      await other.close();
    }
  });

  it("rolls back and reports a failing migration, leaving the database usable", async () => {
    const broken = defineChallenge({
      slug: "broken",
      version: "1",
      migrations: [{ version: 1, name: "bad", sql: "create table broken_t (; nonsense" }],
      weights: () => ({}),
    });
    await expect(startOn(broken, { env, db })).rejects.toThrow(/broken\/0001_bad failed/);
    expect(await db.sql`select to_regclass('broken_t') as t`).toEqual([{ t: null }]);
  });

  it("answers HEAD through the GET route, authenticated the same way", async () => {
    await initCrypto();
    const miner = keypairFromMnemonic(generateMnemonic());
    const challenge = defineChallenge({
      slug: "unit",
      version: "1",
      weights: () => ({}),
      routes: (r) => r.signed({ method: "GET", path: "/v1/me", handler: ({ miner }) => miner }),
    });
    const running = await startOn(challenge, { env, db });
    expect(
      (await running.instance.fetch(new Request("http://x/v1/me", { method: "HEAD" }))).status,
    ).toBe(401);
    const headers = signRequest(miner, { method: "GET", url: "http://x/v1/me", slug: "unit" });
    expect((await running.instance.fetch(new Request("http://x/v1/me", { headers }))).status).toBe(
      200,
    );
    await running.close();
  });
});
