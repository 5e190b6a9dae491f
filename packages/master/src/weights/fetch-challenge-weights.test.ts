import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  type FakeChallenge,
  type FakeReply,
  startFakeChallenge,
} from "../../test/weights/fake-challenge.js";
import {
  type FetchChallengeWeightsOptions,
  fetchChallengeWeights,
  getWeightsUrl,
} from "./fetch-challenge-weights.js";

const TOKEN = "ct_test_token_abcdefghijklmnop";
const fakes: FakeChallenge[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

async function fake(
  reply?: (call: number) => FakeReply,
  extra: { prefix?: string; slug?: string } = {},
) {
  const started = await startFakeChallenge({
    slug: extra.slug ?? "alpha",
    token: TOKEN,
    ...(reply ? { reply } : {}),
    ...extra,
  });
  fakes.push(started);
  return started;
}

const options = (
  target: FakeChallenge,
  overrides: Partial<FetchChallengeWeightsOptions> = {},
): FetchChallengeWeightsOptions => ({
  slug: target.slug,
  baseUrl: target.url,
  token: TOKEN,
  timeoutMs: 2_000,
  retries: 0,
  backoffMs: 5,
  ...overrides,
});

describe("fetchChallengeWeights over a real socket", () => {
  it("sends the bearer token and both slug headers, and returns the validated reply", async () => {
    const target = await fake(() => ({
      json: { challenge_slug: "alpha", epoch: 12, weights: { "5Alice": 0.25, "5Bob": 0.75 } },
    }));
    const result = await fetchChallengeWeights(options(target));
    expect(result).toMatchObject({
      ok: true,
      attempts: 1,
      reply: { challenge_slug: "alpha", epoch: 12, weights: { "5Alice": 0.25, "5Bob": 0.75 } },
    });
    expect(result.ok && result.latency_ms).toBeGreaterThanOrEqual(0);
    expect(target.requests).toHaveLength(1);
    const { method, url, headers } = target.requests[0]!;
    expect(method).toBe("GET");
    expect(url).toBe("/internal/v1/get_weights");
    expect(headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(headers["x-platform-challenge-slug"]).toBe("alpha");
    expect(headers["x-core-challenge-slug"]).toBe("alpha");
  });

  it("accepts a reply without epoch, and with an empty weights object", async () => {
    const target = await fake(() => ({ json: { challenge_slug: "alpha", weights: {} } }));
    expect(await fetchChallengeWeights(options(target))).toMatchObject({
      ok: true,
      reply: { weights: {} },
    });
  });

  it("is refused (401, not retried) with a wrong token or slug, and says only the status", async () => {
    const target = await fake();
    const wrongToken = await fetchChallengeWeights(
      options(target, { token: "ct_wrong", retries: 3 }),
    );
    expect(wrongToken).toEqual({
      ok: false,
      error: "HTTP 401",
      attempts: 1,
      latency_ms: expect.any(Number),
    });
    expect(JSON.stringify(wrongToken)).not.toContain("ct_wrong");
    const wrongSlug = await fetchChallengeWeights(options(target, { slug: "beta", retries: 3 }));
    expect(wrongSlug).toMatchObject({ ok: false, error: "HTTP 401", attempts: 1 });
    expect(target.served).toBe(0);
  });

  it("keeps a path prefix of the base URL, with or without a trailing slash", async () => {
    const target = await fake(undefined, { prefix: "/svc/alpha" });
    expect(await fetchChallengeWeights(options(target))).toMatchObject({ ok: true });
    expect(
      await fetchChallengeWeights(options(target, { baseUrl: `${target.url}/` })),
    ).toMatchObject({ ok: true });
    expect(target.requests.map((r) => r.url)).toEqual([
      "/svc/alpha/internal/v1/get_weights",
      "/svc/alpha/internal/v1/get_weights",
    ]);
    expect(getWeightsUrl("http://h:1/p?x=1#f").href).toBe("http://h:1/p/internal/v1/get_weights");
  });

  it("times out a challenge that never answers, and retries it", async () => {
    const target = await fake(() => "hang");
    const started = performance.now();
    const result = await fetchChallengeWeights(options(target, { timeoutMs: 150, retries: 1 }));
    expect(result).toMatchObject({ ok: false, error: "timed out after 150 ms", attempts: 2 });
    // Both attempts waited their timeout (2 x 150 ms), and it did not hang on the silent challenge.
    expect(performance.now() - started).toBeGreaterThanOrEqual(2 * 150 - 10);
    expect(performance.now() - started).toBeLessThan(10 * 2 * 150);
  });

  it("times out a body that stalls after the headers", async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"challenge_slug":"alpha",');
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const result = await fetchChallengeWeights({
        slug: "alpha",
        baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        token: TOKEN,
        timeoutMs: 200,
        retries: 0,
      });
      expect(result).toMatchObject({ ok: false, error: "timed out after 200 ms" });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it("retries a 500 then succeeds", async () => {
    const target = await fake((call) =>
      call < 3
        ? { status: 500, json: { detail: "boom" } }
        : { json: { challenge_slug: "alpha", weights: { a: 1 } } },
    );
    const result = await fetchChallengeWeights(options(target, { retries: 2 }));
    expect(result).toMatchObject({ ok: true, attempts: 3 });
    expect(target.served).toBe(3);
  });

  it("gives up on a 500 after the configured retries", async () => {
    const target = await fake(() => ({ status: 500, json: { detail: "secret stack trace" } }));
    const result = await fetchChallengeWeights(options(target, { retries: 2 }));
    expect(result).toMatchObject({ ok: false, error: "HTTP 500", attempts: 3 });
    expect(JSON.stringify(result)).not.toContain("secret stack trace");
    expect(target.served).toBe(3);
  });

  it.each([
    [429, true],
    [503, true],
    [404, false],
    [403, false],
  ])("HTTP %i is retried: %s", async (status, retried) => {
    const target = await fake(() => ({ status, json: {} }));
    const result = await fetchChallengeWeights(options(target, { retries: 1 }));
    expect(result).toMatchObject({ ok: false, error: `HTTP ${status}`, attempts: retried ? 2 : 1 });
  });

  it("does not follow a redirect (the bearer must not travel elsewhere)", async () => {
    const elsewhere = await fake(undefined, { slug: "alpha" });
    const target = await fake(() => ({
      status: 302,
      headers: { location: `${elsewhere.url}/internal/v1/get_weights` },
      body: "",
    }));
    const result = await fetchChallengeWeights(options(target, { retries: 2 }));
    expect(result).toMatchObject({ ok: false, error: "HTTP 302", attempts: 1 });
    expect(elsewhere.requests).toHaveLength(0);
  });

  it("fails on invalid JSON without retrying", async () => {
    const target = await fake(() => ({ body: "{weights: oops" }));
    expect(await fetchChallengeWeights(options(target, { retries: 2 }))).toMatchObject({
      ok: false,
      error: "invalid JSON in reply",
      attempts: 1,
    });
  });

  it.each([
    [
      "a string weight",
      { challenge_slug: "alpha", weights: { a: "NaN" } },
      /invalid reply at weights\.a:/,
    ],
    [
      "a null weight",
      { challenge_slug: "alpha", weights: { a: null } },
      /invalid reply at weights\.a:/,
    ],
    ["no weights", { challenge_slug: "alpha" }, /invalid reply at weights: Field required/],
    ["weights as a list", { challenge_slug: "alpha", weights: [1, 2] }, /invalid reply at weights/],
    [
      "a negative epoch",
      { challenge_slug: "alpha", epoch: -1, weights: {} },
      /invalid reply at epoch/,
    ],
    ["no slug", { weights: { a: 1 } }, /invalid reply at challenge_slug: Field required/],
    ["an array", [1, 2], /invalid reply at \(root\)/],
    ["null", null, /invalid reply/],
  ])("fails on a reply with %s", async (_label, body, message) => {
    const target = await fake(() => ({ json: body }));
    const result = await fetchChallengeWeights(options(target, { retries: 2 }));
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error).toMatch(message);
    expect(result.attempts).toBe(1);
  });

  it("fails when the reply names another challenge", async () => {
    const target = await fake(() => ({ json: { challenge_slug: "beta", weights: { a: 1 } } }));
    expect(await fetchChallengeWeights(options(target))).toMatchObject({
      ok: false,
      error: 'slug mismatch: reply is for "beta"',
    });
  });

  it("caps the reply size, declared or streamed", async () => {
    const big = {
      challenge_slug: "alpha",
      weights: Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`hotkey-${i}`, 1])),
    };
    const target = await fake(() => ({ json: big }));
    expect(await fetchChallengeWeights(options(target, { maxBytes: 1_000 }))).toMatchObject({
      ok: false,
      error: "reply larger than 1000 bytes",
    });
    const chunked = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      const payload = JSON.stringify(big);
      res.write(payload.slice(0, 20_000));
      res.end(payload.slice(20_000));
    });
    await new Promise<void>((resolve) => chunked.listen(0, "127.0.0.1", resolve));
    try {
      const result = await fetchChallengeWeights({
        ...options(target, { maxBytes: 10_000 }),
        baseUrl: `http://127.0.0.1:${(chunked.address() as AddressInfo).port}`,
      });
      expect(result).toMatchObject({ ok: false, error: "reply larger than 10000 bytes" });
    } finally {
      chunked.closeAllConnections();
      chunked.close();
    }
  });

  it("reports an unreachable challenge by errno, retried, without its address", async () => {
    const result = await fetchChallengeWeights({
      slug: "alpha",
      baseUrl: "http://127.0.0.1:1",
      token: TOKEN,
      timeoutMs: 1000,
      retries: 1,
      backoffMs: 5,
    });
    expect(result).toMatchObject({ ok: false, error: "unreachable (ECONNREFUSED)", attempts: 2 });
  });

  it("refuses a base URL that is not a URL without calling anything", async () => {
    expect(
      await fetchChallengeWeights({
        slug: "alpha",
        baseUrl: "not a url",
        token: TOKEN,
        timeoutMs: 1000,
        retries: 3,
      }),
    ).toEqual({
      ok: false,
      error: "internal_base_url is not a valid URL",
      attempts: 0,
      latency_ms: null,
    });
  });

  it("stops at once, between retries too, when the signal aborts", async () => {
    const target = await fake(() => "hang");
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = performance.now();
    const result = await fetchChallengeWeights(
      options(target, {
        timeoutMs: 5_000,
        retries: 5,
        backoffMs: 5_000,
        signal: controller.signal,
      }),
    );
    expect(result).toMatchObject({ ok: false, error: "collection cancelled", attempts: 1 });
    // Not one attempt's timeout (5 s), let alone the backoff: the abort ended it.
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
