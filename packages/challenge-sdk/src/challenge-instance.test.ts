import {
  type Database,
  generateMnemonic,
  initCrypto,
  keypairFromMnemonic,
  signRequest,
} from "@platform/core";
import { createTestDatabase } from "@platform/core/testing";
import { Type } from "@sinclair/typebox";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import type { StartOptions } from "./challenge-instance.js";
import { type Challenge, defineChallenge } from "./define-challenge.js";

const TOKEN = "ct_0123456789abcdefghijklmnopqrstuvwxyz";
const env = { CHALLENGE_TOKEN: TOKEN, LOG_LEVEL: "silent" };
const internal = { authorization: `Bearer ${TOKEN}`, "x-platform-challenge-slug": "unit" };

function startOn<Cfg, State>(challenge: Challenge<Cfg, State>, options: StartOptions) {
  return challenge.start({ host: "127.0.0.1", port: 0, ...options });
}

describe("a challenge's state and cleanup", () => {
  let db: Database;
  beforeAll(async () => {
    db = await createTestDatabase({ backend: "pglite" });
  });
  afterAll(() => db?.close());

  it("hands what setup returned to every handler, auth hook and weights, typed", async () => {
    const seen: string[] = [];
    const challenge = defineChallenge({
      slug: "unit",
      version: "1",
      config: Type.Object({ GREETING: Type.String({ default: "hi" }) }),
      setup: async ({ config }) => ({ greeting: config.GREETING, hits: 0 }),
      routes: (router) => {
        router.public({
          method: "GET",
          path: "/v1/hello",
          auth: ({ state }) => {
            seen.push(`auth ${state.greeting}`);
          },
          handler: ({ state }) => {
            expectTypeOf(state).toEqualTypeOf<{ greeting: string; hits: number }>();
            state.hits++;
            return { greeting: state.greeting, hits: state.hits };
          },
        });
      },
      weights: ({ state }) => ({ [`h${state.hits}`]: 1 }),
    });
    const running = await startOn(challenge, { env: { ...env, GREETING: "hello" }, db });
    try {
      expectTypeOf(running.instance.state).toEqualTypeOf<{ greeting: string; hits: number }>();
      const hello = await running.instance.fetch(new Request("http://x/v1/hello"));
      expect(await hello.json()).toEqual({ greeting: "hello", hits: 1 });
      // Over the socket too: the same instance, the same state object.
      const again = await fetch(`${running.url}/v1/hello`);
      expect(await again.json()).toEqual({ greeting: "hello", hits: 2 });
      const weights = await running.instance.fetch(
        new Request("http://x/internal/v1/get_weights", { headers: internal }),
      );
      expect(((await weights.json()) as { weights: unknown }).weights).toEqual({ h2: 1 });
      expect(seen).toEqual(["auth hello", "auth hello"]);
    } finally {
      await running.close();
    }
  });

  it("gives each instance of one definition its own state", async () => {
    const challenge = defineChallenge({
      slug: "unit",
      version: "1",
      setup: () => ({ id: Math.random() }),
      routes: (r) => r.public({ method: "GET", path: "/v1/id", handler: ({ state }) => state }),
      weights: () => ({}),
    });
    const one = await startOn(challenge, { env, db });
    const two = await startOn(challenge, { env, memory: true });
    try {
      expect(one.instance.state.id).not.toBe(two.instance.state.id);
      const read = async (running: typeof one) =>
        (await (await running.instance.fetch(new Request("http://x/v1/id"))).json()) as {
          id: number;
        };
      expect((await read(one)).id).toBe(one.instance.state.id);
      expect((await read(two)).id).toBe(two.instance.state.id);
    } finally {
      await one.close();
      await two.close();
    }
  });

  it("runs onClose cleanups last-first on close, before the database closes, once", async () => {
    const order: string[] = [];
    const own = await createTestDatabase({ backend: "pglite" });
    const challenge = defineChallenge({
      slug: "unit",
      version: "1",
      setup: ({ sql, onClose }) => {
        onClose(async () => {
          // The database is still open for the first-registered cleanup, which runs last.
          const [row] = await sql<{ one: number }[]>`select 1 as one`;
          order.push(`first (db ${row?.one})`);
        });
        onClose(() => {
          order.push("second");
        });
      },
      weights: () => ({}),
    });
    const running = await startOn(challenge, { env, db: own });
    expect(running.instance.state).toBeUndefined();
    await Promise.all([running.close(), running.close()]);
    expect(order).toEqual(["second", "first (db 1)"]);
    await own.close();
  });

  it("undoes what setup registered when setup fails, and reports the failure", async () => {
    const order: string[] = [];
    const challenge = defineChallenge({
      slug: "unit",
      version: "1",
      setup: ({ onClose }) => {
        onClose(() => {
          order.push("cleaned");
        });
        throw new Error("setup broke");
      },
      weights: () => ({}),
    });
    await expect(startOn(challenge, { env, db })).rejects.toThrow("setup broke");
    expect(order).toEqual(["cleaned"]);
  });

  it("still closes the database when a cleanup fails, then throws that failure", async () => {
    const challenge = defineChallenge({
      slug: "unit",
      version: "1",
      setup: ({ onClose }) => {
        onClose(() => {
          throw new Error("cleanup broke");
        });
      },
      weights: () => ({}),
    });
    const running = await startOn(challenge, { env, memory: true });
    const { sql } = running.instance;
    await expect(running.close()).rejects.toThrow("cleanup broke");
    await expect(sql`select 1`).rejects.toThrow();
  });

  it("refuses the removed `teardown` with the way to do it now", () => {
    // A block body: vitest's types for expect(() => challenge) instantiate too deeply.
    const define = () => {
      defineChallenge({
        slug: "unit",
        version: "1",
        weights: () => ({}),
        teardown: () => {},
      } as never);
    };
    expect(define).toThrow(/onClose/);
  });
});

describe("signed routes through the verify pool", () => {
  let db: Database;
  beforeAll(async () => {
    await initCrypto();
    db = await createTestDatabase({ backend: "pglite" });
  });
  afterAll(() => db?.close());

  const challenge = defineChallenge({
    slug: "unit",
    version: "1",
    weights: () => ({}),
    routes: (r) =>
      r.signed({
        method: "POST",
        path: "/v1/echo",
        body: Type.Object({ n: Type.Integer() }),
        handler: ({ miner, body }) => ({ hotkey: miner.hotkey, n: body.n }),
      }),
  });

  it.each([
    ["the start option", { verifyPool: { size: 2 } }, env],
    ["VERIFY_POOL_SIZE", {}, { ...env, VERIFY_POOL_SIZE: "1" }],
  ])(
    "with %s: accepts a good signature, refuses a bad one and a replay",
    async (_, options, environment) => {
      const running = await startOn(challenge, { ...options, env: environment, db });
      try {
        expect(running.instance.settings.verifyPoolSize).toBeGreaterThan(0);
        const miner = keypairFromMnemonic(generateMnemonic());
        const url = `${running.url}/v1/echo`;
        const body = JSON.stringify({ n: 7 });
        const signed = signRequest(miner, { method: "POST", url, body, slug: "unit" });
        const headers = { ...signed, "content-type": "application/json" };
        const good = await fetch(url, { method: "POST", headers, body });
        expect(good.status).toBe(200);
        expect(await good.json()).toEqual({ hotkey: miner.address, n: 7 });
        const replay = await fetch(url, { method: "POST", headers, body });
        expect(replay.status).toBe(409);
        // Another body under the same signature: the pool says no, as the inline check would.
        const forged = signRequest(miner, { method: "POST", url, body, slug: "unit" });
        const tampered = await fetch(url, {
          method: "POST",
          headers: { ...forged, "content-type": "application/json" },
          body: JSON.stringify({ n: 8 }),
        });
        expect(tampered.status).toBe(401);
        expect(await tampered.json()).toMatchObject({ code: "bad_signature" });
        // A signature by another key over this exact request: refused too.
        const other = keypairFromMnemonic(generateMnemonic());
        const stolen = signRequest(other, { method: "POST", url, body, slug: "unit" });
        const impostor = await fetch(url, {
          method: "POST",
          headers: { ...stolen, "x-hotkey": miner.address, "content-type": "application/json" },
          body,
        });
        expect(impostor.status).toBe(401);
        // Issue 10 item 5: a repeated query key, signed in one order and sent in the other,
        // is refused 400 duplicate_query_key (the canonical query sorts the values).
        const signedUrl = `${url}?tag=good&tag=evil`;
        const twice = signRequest(miner, { method: "POST", url: signedUrl, body, slug: "unit" });
        for (const sent of [signedUrl, `${url}?tag=evil&tag=good`]) {
          const duplicate = await fetch(sent, {
            method: "POST",
            headers: { ...twice, "content-type": "application/json" },
            body,
          });
          expect(duplicate.status).toBe(400);
          expect(await duplicate.json()).toMatchObject({ code: "duplicate_query_key" });
        }
      } finally {
        await running.close();
      }
    },
  );
});

describe("the raw body beside a parsed one", () => {
  let db: Database;
  beforeAll(async () => {
    db = await createTestDatabase({ backend: "pglite" });
  });
  afterAll(() => db?.close());

  const challenge = defineChallenge({
    slug: "unit",
    version: "1",
    weights: () => ({}),
    routes: (r) => {
      r.public({
        method: "POST",
        path: "/v1/exact",
        body: Type.Object({ n: Type.Integer() }),
        handler: ({ body, rawBody }) => ({
          n: body.n,
          raw: rawBody === undefined ? null : Buffer.from(rawBody).toString("utf8"),
        }),
      });
      r.public({
        method: "GET",
        path: "/v1/none",
        handler: ({ rawBody }) => ({ has_raw: rawBody !== undefined }),
      });
    },
  });

  it("hands a handler the exact bytes it parsed (for byte-exact checks), none without a body", async () => {
    const running = await startOn(challenge, { env, db });
    try {
      const sent = '{ "n" :7 }';
      const answer = await fetch(`${running.url}/v1/exact`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: sent,
      });
      expect(await answer.json()).toEqual({ n: 7, raw: sent });
      expect(await (await fetch(`${running.url}/v1/none`)).json()).toEqual({ has_raw: false });
    } finally {
      await running.close();
    }
  });
});
