import { createHash } from "node:crypto";
import { PLATFORM_HEADERS } from "@platform/challenge-sdk/proxy-contract";
import {
  createMinerKey,
  startTestChallenge,
  type TestChallenge,
} from "@platform/challenge-sdk/testing";
import { encodeSs58, newNonce, signRequest } from "@platform/core";
import { testBackends } from "@platform/core/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { attemptToken, echoChallenge, lifecycle } from "./example-challenge.js";

const slug = echoChallenge.slug;
const json = (value: unknown) => JSON.stringify(value);
const JSON_TYPE = { "content-type": "application/json" };

async function errorOf(response: Response) {
  return { status: response.status, ...((await response.json()) as Record<string, unknown>) };
}

describe.each(await testBackends())("the example challenge on %s", (backend) => {
  let t: TestChallenge<unknown>;
  beforeAll(async () => {
    t = await startTestChallenge(echoChallenge, { backend, env: { ECHO_MAX_SCORE: "500" } });
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    // Every test starts from no scores, no bans and no rate-limit history.
    await t.sql`delete from echo_scores`;
    await t.sql`delete from echo_banned`;
    await t.sql`delete from sdk_rate_limits`;
  });

  const submit = (score: number, init: Parameters<TestChallenge["signedFetch"]>[1] = {}) =>
    t.signedFetch("/v1/scores", { method: "POST", json: { score }, ...init });

  describe("service routes", () => {
    it("ran migrations (sdk and the challenge's own) and setup before serving", async () => {
      const applied = await t.sql<{ namespace: string; version: number }[]>`
        select namespace, version from platform_migrations order by namespace, version`;
      expect(applied.filter((r) => r.namespace === slug).map((r) => r.version)).toEqual([1]);
      expect(applied.filter((r) => r.namespace === "sdk").map((r) => r.version)).toEqual(
        expect.arrayContaining([1, 2]),
      );
      const [setup] = await t.sql`select count(*)::int as n from echo_events where kind = 'setup'`;
      expect(setup?.["n"]).toBe(1);
    });

    it("GET /health reports the slug, version and backend", async () => {
      const response = await t.fetch("/health");
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        status: "ok",
        slug,
        version: "1.2.3",
        database: { backend, ok: true },
      });
    });

    it("GET /version reports exactly the four fields, with the author's capabilities added", async () => {
      const response = await t.fetch("/version");
      expect(await response.json()).toEqual({
        api_version: "1.0",
        challenge_version: "1.2.3",
        sdk_version: (await import("../src/version.js")).SDK_VERSION,
        capabilities: ["get_weights", "proxy_routes", "bridge_submissions"],
      });
    });

    it("GET /openapi.json documents bodies, parameters and each route's credential", async () => {
      const doc = (await (await t.fetch("/openapi.json")).json()) as {
        openapi: string;
        info: { title: string };
        paths: Record<string, Record<string, Record<string, unknown>>>;
        components: { securitySchemes: Record<string, unknown> };
      };
      expect(doc.openapi).toBe("3.1.0");
      expect(doc.info.title).toBe("Echo scores");
      const submitOp = doc.paths["/v1/scores"]?.["post"] as {
        security: unknown;
        requestBody: {
          content: Record<string, { schema: { properties: Record<string, unknown> } }>;
        };
        responses: Record<string, unknown>;
      };
      expect(submitOp.security).toEqual([{ minerSignature: [] }]);
      expect(submitOp.requestBody.content["application/json"]?.schema.properties["score"]).toEqual({
        type: "number",
      });
      expect(Object.keys(submitOp.responses)).toEqual(
        expect.arrayContaining(["201", "401", "403", "409", "422", "429"]),
      );
      expect(doc.paths["/v1/scores/{id}"]?.["get"]?.["parameters"]).toEqual([
        expect.objectContaining({ name: "id", in: "path", required: true }),
      ]);
      expect(doc.paths["/internal/v1/get_weights"]?.["get"]?.["security"]).toEqual([
        { challengeToken: [] },
      ]);
      expect(doc.paths["/v1/me"]?.["delete"]).toBeDefined();
      expect(doc.paths["/openapi.json"]).toBeUndefined();
      expect(Object.keys(doc.components.securitySchemes).sort()).toEqual([
        "challengeToken",
        "minerSignature",
      ]);
    });
  });

  describe("get_weights", () => {
    it("is {} with epoch 7 before any score", async () => {
      const response = await t.fetch("/internal/v1/get_weights", { headers: t.internalHeaders });
      expect(await response.json()).toEqual({ challenge_slug: slug, epoch: 7, weights: {} });
    });

    it("serves each hotkey's best score, normalised", async () => {
      const other = await createMinerKey();
      expect((await submit(30)).status).toBe(201);
      expect((await submit(10)).status).toBe(201);
      expect((await submit(10, { miner: other })).status).toBe(201);
      const response = await t.fetch("/internal/v1/get_weights", { headers: t.internalHeaders });
      const body = (await response.json()) as { weights: Record<string, number> };
      expect(body.weights[t.miner.hotkey]).toBeCloseTo(0.75, 12);
      expect(body.weights[other.hotkey]).toBeCloseTo(0.25, 12);
    });

    it("needs the bearer (401) and a slug header naming this challenge (403)", async () => {
      const cases: [Record<string, string>, number, string][] = [
        [{ [PLATFORM_HEADERS.challengeSlug]: slug }, 401, "invalid_internal_token"],
        [
          {
            authorization: `Bearer ${t.token.slice(0, -1)}`,
            [PLATFORM_HEADERS.challengeSlug]: slug,
          },
          401,
          "invalid_internal_token",
        ],
        [
          { authorization: t.token, [PLATFORM_HEADERS.challengeSlug]: slug },
          401,
          "invalid_internal_token",
        ],
        [{ authorization: `Bearer ${t.token}` }, 403, "challenge_slug_mismatch"],
        [
          { authorization: `Bearer ${t.token}`, [PLATFORM_HEADERS.challengeSlug]: "other" },
          403,
          "challenge_slug_mismatch",
        ],
        // Both sent and one disagrees: refused, never "one of them matched".
        [
          { ...t.internalHeaders, [PLATFORM_HEADERS.coreChallengeSlug]: "other" },
          403,
          "challenge_slug_mismatch",
        ],
      ];
      for (const [headers, status, code] of cases) {
        const response = await t.fetch("/internal/v1/get_weights", { headers });
        expect(await errorOf(response)).toMatchObject({ status, code });
      }
      const ok = await t.fetch("/internal/v1/get_weights", {
        headers: { authorization: `Bearer ${t.token}`, [PLATFORM_HEADERS.coreChallengeSlug]: slug },
      });
      expect(ok.status).toBe(200);
    });

    it("never echoes the token in a refusal", async () => {
      const response = await t.fetch("/internal/v1/get_weights", {
        headers: { authorization: `Bearer ${t.token}x`, [PLATFORM_HEADERS.challengeSlug]: slug },
      });
      expect(await response.text()).not.toContain(t.token);
    });
  });

  describe("signed routes", () => {
    it("store the score under the canonical hotkey with the request hash", async () => {
      const response = await submit(42);
      expect(response.status).toBe(201);
      const { id } = (await response.json()) as { id: number };
      const row = (await (await t.fetch(`/v1/scores/${id}`)).json()) as Record<string, unknown>;
      expect(row).toMatchObject({ hotkey: t.miner.hotkey, score: 42, via: "signed" });
      expect(row["request_hash"]).toMatch(/^[0-9a-f]{64}$/);
    });

    it("hand the handler the exact bytes that were signed", async () => {
      const bytes = new Uint8Array([0, 1, 2, 255, 10, 13]);
      const response = await t.signedFetch("/v1/echo", {
        method: "POST",
        body: bytes,
        headers: { "content-type": "application/octet-stream" },
      });
      expect(await response.json()).toEqual({
        hotkey: t.miner.hotkey,
        bytes: 6,
        same: true,
        sha256: createHash("sha256").update(bytes).digest("hex"),
      });
    });

    it("refuse a replayed nonce with 409 nonce_reused", async () => {
      const body = json({ score: 5 });
      const headers = { ...JSON_TYPE, ...t.sign("POST", "/v1/scores", { body }) };
      expect((await t.fetch("/v1/scores", { method: "POST", headers, body })).status).toBe(201);
      const replay = await t.fetch("/v1/scores", { method: "POST", headers, body });
      expect(await errorOf(replay)).toMatchObject({ status: 409, code: "nonce_reused" });
      const [count] = await t.sql`select count(*)::int as n from echo_scores`;
      expect(count?.["n"]).toBe(1);
    });

    it("let exactly one of many concurrent copies of a signed request through", async () => {
      const body = json({ score: 1 });
      const headers = { ...JSON_TYPE, ...t.sign("POST", "/v1/scores", { body }) };
      const responses = await Promise.all(
        Array.from({ length: 12 }, () => t.fetch("/v1/scores", { method: "POST", headers, body })),
      );
      const statuses = responses.map((r) => r.status).sort();
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(11);
    });

    it("refuse a tampered body, query, method or slug with 401 bad_signature", async () => {
      const body = json({ score: 5 });
      const signed = t.sign("POST", "/v1/scores", { body });
      const tampered = await t.fetch("/v1/scores", {
        method: "POST",
        headers: { ...JSON_TYPE, ...signed },
        body: json({ score: 500 }),
      });
      expect(await errorOf(tampered)).toMatchObject({ status: 401, code: "bad_signature" });

      const query = t.sign("GET", "/v1/me?verbose=false");
      const moved = await t.fetch("/v1/me?verbose=true", { headers: query });
      expect(await errorOf(moved)).toMatchObject({ status: 401, code: "bad_signature" });

      const asGet = t.sign("GET", "/v1/me");
      const asDelete = await t.fetch("/v1/me", { method: "DELETE", headers: asGet });
      expect(await errorOf(asDelete)).toMatchObject({ status: 401, code: "bad_signature" });

      // HEAD is answered by the GET route with its own method: signed as HEAD it verifies,
      // and a GET signature cannot be replayed as HEAD.
      const head = await t.fetch("/v1/me", { method: "HEAD", headers: t.sign("HEAD", "/v1/me") });
      expect(head.status).toBe(200);
      const getAsHead = await t.fetch("/v1/me", {
        method: "HEAD",
        headers: t.sign("GET", "/v1/me"),
      });
      expect(getAsHead.status).toBe(401);

      const otherSlug = signRequest(t.miner, {
        method: "GET",
        url: `${t.url}/v1/me`,
        slug: "another",
      });
      const wrongSlug = await t.fetch("/v1/me", { headers: otherSlug });
      expect(await errorOf(wrongSlug)).toMatchObject({ status: 401, code: "bad_signature" });
      const [count] = await t.sql`select count(*)::int as n from echo_scores`;
      expect(count?.["n"]).toBe(0);
    });

    it("refuse missing headers, stale timestamps and foreign hotkeys with the verifier's code", async () => {
      const missing = await t.fetch("/v1/me", { headers: { "x-hotkey": t.miner.hotkey } });
      expect(await errorOf(missing)).toMatchObject({
        status: 401,
        code: "missing_signature_headers",
      });
      const stale = await t.signedFetch("/v1/me", {
        timestamp: Math.floor(Date.now() / 1000) - 301,
      });
      expect(await errorOf(stale)).toMatchObject({ status: 401, code: "timestamp_out_of_window" });
      const headers = new Headers(t.sign("GET", "/v1/me"));
      headers.set("x-hotkey", (await createMinerKey()).hotkey);
      const swapped = await t.fetch("/v1/me", { headers });
      expect(await errorOf(swapped)).toMatchObject({ status: 401, code: "bad_signature" });
    });

    it("accept the form a miner signs through the master, /challenges/{slug}/...", async () => {
      const response = await t.signedFetch("/v1/me?verbose=true", { viaProxy: true });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({
        miner: { hotkey: t.miner.hotkey },
        verbose: true,
      });
      // ...but only under this challenge's own slug.
      const target = `/challenges/other-challenge/v1/me`;
      const headers = signRequest(t.miner, { method: "GET", url: target, slug });
      const foreign = await t.fetch("/v1/me", { headers });
      expect(await errorOf(foreign)).toMatchObject({ status: 401, code: "bad_signature" });
    });

    it("authenticate before validating: an unsigned bad body is 401, a signed one 422", async () => {
      const unsigned = await t.fetch("/v1/scores", {
        method: "POST",
        headers: JSON_TYPE,
        body: json({ score: "high" }),
      });
      expect(unsigned.status).toBe(401);
      const signed = await submit(0, { json: { score: "high", extra: 1 } });
      expect(signed.status).toBe(422);
      expect(await signed.json()).toEqual({
        detail: [
          { loc: ["body", "extra"], msg: expect.any(String), type: "extra_forbidden" },
          { loc: ["body", "score"], msg: "Expected number", type: "float_type" },
        ],
      });
    });

    it("spend the nonce of a request that then fails validation", async () => {
      const body = json({ score: "nope" });
      const headers = { ...JSON_TYPE, ...t.sign("POST", "/v1/scores", { body }) };
      expect((await t.fetch("/v1/scores", { method: "POST", headers, body })).status).toBe(422);
      expect((await t.fetch("/v1/scores", { method: "POST", headers, body })).status).toBe(409);
    });

    it("answer 415 for a non-JSON body and 413 past the route's limit, never 500", async () => {
      const text = await t.signedFetch("/v1/scores", {
        method: "POST",
        body: "score=5",
        headers: { "content-type": "text/plain" },
      });
      expect(await errorOf(text)).toMatchObject({ status: 415, code: "unsupported_media_type" });
      const big = await t.signedFetch("/v1/echo", {
        method: "POST",
        body: new Uint8Array(65),
        headers: { "content-type": "application/octet-stream" },
      });
      expect(await errorOf(big)).toMatchObject({ status: 413, code: "payload_too_large" });
      const broken = await t.signedFetch("/v1/scores", {
        method: "POST",
        body: "{not json",
        headers: JSON_TYPE,
      });
      expect(broken.status).toBe(422);
      expect(((await broken.json()) as { detail: { type: string }[] }).detail[0]?.type).toBe(
        "json_invalid",
      );
    });

    it("refuse an unregistered hotkey with 403 hotkey_not_registered", async () => {
      await t.sql`insert into echo_banned (hotkey) values (${t.miner.hotkey})`;
      expect(await errorOf(await submit(5))).toMatchObject({
        status: 403,
        code: "hotkey_not_registered",
      });
      const [count] = await t.sql`select count(*)::int as n from echo_scores`;
      expect(count?.["n"]).toBe(0);
    });

    it("rate-limit per hotkey with Retry-After, counting only requests that succeed", async () => {
      // A request the handler refuses (400) gives its slot back.
      expect((await submit(10_000)).status).toBe(400);
      for (let i = 0; i < 3; i++) expect((await submit(1 + i)).status).toBe(201);
      const limited = await submit(4);
      expect(limited.status).toBe(429);
      const retryAfter = Number(limited.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(await limited.json()).toMatchObject({
        code: "rate_limited",
        retry_after_seconds: retryAfter,
      });
      // Another hotkey has its own count.
      expect((await submit(1, { miner: await createMinerKey() })).status).toBe(201);
    });

    it("never let a replayed request eat the miner's rate limit", async () => {
      const body = json({ score: 2 });
      const headers = { ...JSON_TYPE, ...t.sign("POST", "/v1/scores", { body }) };
      expect((await t.fetch("/v1/scores", { method: "POST", headers, body })).status).toBe(201);
      for (let i = 0; i < 5; i++) {
        expect((await t.fetch("/v1/scores", { method: "POST", headers, body })).status).toBe(409);
      }
      // Two of the three slots are still the miner's own.
      expect((await submit(1)).status).toBe(201);
      expect((await submit(1)).status).toBe(201);
      expect((await submit(1)).status).toBe(429);
    });

    it("share a rate-limit bucket with the bridge route", async () => {
      for (let i = 0; i < 2; i++) expect((await submit(1)).status).toBe(201);
      const bridged = await t.fetch("/internal/v1/bridge/submissions", {
        method: "POST",
        headers: { ...t.bridgeHeaders(t.miner.hotkey), ...JSON_TYPE },
        body: json({ score: 3 }),
      });
      expect(bridged.status).toBe(201);
      expect((await submit(1)).status).toBe(429);
    });

    it("work in-process through instance.fetch, with no socket", async () => {
      const url = "http://challenge.local/v1/me?verbose=true";
      const headers = signRequest(t.miner, { method: "GET", url, slug });
      const response = await t.runtime.fetch(new Request(url, { headers }));
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ verbose: true, method: "GET" });
    });
  });

  describe("bridge routes", () => {
    const bridge = (
      headers: Record<string, string>,
      body: string | Uint8Array = json({ score: 7 }),
      type = "application/json",
    ) =>
      t.fetch("/internal/v1/bridge/submissions", {
        method: "POST",
        headers: { "content-type": type, ...headers },
        body: typeof body === "string" ? body : new Uint8Array(body),
      });

    it("take the hotkey from the master's verified headers, never from X-Hotkey", async () => {
      const miner = await createMinerKey();
      // The client also sends a VALID signature of its own key: it must be ignored.
      const forged = t.sign("POST", "/internal/v1/bridge/submissions", {
        body: json({ score: 7 }),
      });
      const response = await bridge({
        ...t.bridgeHeaders(miner.hotkey, { filename: "bundle.zip" }),
        ...forged,
      });
      expect(response.status).toBe(201);
      const body = (await response.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ hotkey: miner.hotkey, filename: "bundle.zip" });
      expect(body["hotkey"]).not.toBe(t.miner.hotkey);
    });

    it("refuse a request without a verified identity, even with a valid miner signature", async () => {
      const forged = t.sign("POST", "/internal/v1/bridge/submissions", {
        body: json({ score: 7 }),
      });
      const response = await bridge({ ...t.internalHeaders, ...forged });
      expect(await errorOf(response)).toMatchObject({
        status: 400,
        code: "missing_verified_identity",
      });
    });

    it("refuse disagreeing or malformed identity headers", async () => {
      const other = await createMinerKey();
      const cases: Record<string, string>[] = [
        { ...t.bridgeHeaders(t.miner.hotkey), [PLATFORM_HEADERS.coreVerifiedHotkey]: other.hotkey },
        { ...t.internalHeaders, [PLATFORM_HEADERS.verifiedHotkey]: "not-a-hotkey" },
        { ...t.bridgeHeaders(t.miner.hotkey), [PLATFORM_HEADERS.coreVerifiedNonce]: "short" },
        { ...t.bridgeHeaders(t.miner.hotkey), [PLATFORM_HEADERS.coreRequestHash]: "XYZ" },
        // The same key spelled with another ss58 prefix: one key must have one spelling.
        {
          ...t.internalHeaders,
          [PLATFORM_HEADERS.verifiedHotkey]: encodeSs58(t.miner.publicKey, 0),
        },
      ];
      for (const headers of cases) {
        expect(await errorOf(await bridge(headers))).toMatchObject({
          status: 400,
          code: "invalid_verified_identity",
        });
      }
    });

    it("check the bearer and slug before anything else", async () => {
      const { authorization: _drop, ...noBearer } = t.bridgeHeaders(t.miner.hotkey);
      expect(await errorOf(await bridge(noBearer, "{broken"))).toMatchObject({
        status: 401,
        code: "invalid_internal_token",
      });
      const wrongSlug = {
        ...t.bridgeHeaders(t.miner.hotkey),
        [PLATFORM_HEADERS.challengeSlug]: "x-y",
      };
      expect(await errorOf(await bridge(wrongSlug))).toMatchObject({
        status: 403,
        code: "challenge_slug_mismatch",
      });
    });

    it("accept the platform hotkey header alone (no nonce, no hash)", async () => {
      const response = await bridge({
        ...t.internalHeaders,
        [PLATFORM_HEADERS.verifiedHotkey]: t.miner.hotkey,
      });
      expect(response.status).toBe(201);
      expect(await response.json()).toMatchObject({
        hotkey: t.miner.hotkey,
        nonce: null,
        filename: null,
      });
    });

    it("spend the forwarded nonce once, sharing the store with signed routes", async () => {
      const nonce = newNonce();
      const headers = t.bridgeHeaders(t.miner.hotkey, { nonce });
      expect((await bridge(headers)).status).toBe(201);
      expect(await errorOf(await bridge(headers))).toMatchObject({
        status: 409,
        code: "nonce_reused",
      });
      const signed = await t.signedFetch("/v1/me", { nonce });
      expect(await errorOf(signed)).toMatchObject({ status: 409, code: "nonce_reused" });
    });

    it("take raw ZIP bytes or JSON, validated after authentication", async () => {
      const zip = new Uint8Array([0x50, 0x4b, 3, 4, 9, 9]);
      const response = await bridge(t.bridgeHeaders(t.miner.hotkey), zip, "application/zip");
      expect(response.status).toBe(201);
      const { id } = (await response.json()) as { id: number };
      const row = (await (await t.fetch(`/v1/scores/${id}`)).json()) as Record<string, unknown>;
      expect(row).toMatchObject({ score: 6, via: "bridge" });
      expect(row["request_hash"]).toMatch(/^[0-9a-f]{64}$/);
      const bad = await bridge(t.bridgeHeaders(t.miner.hotkey), json({ score: "x" }));
      expect(bad.status).toBe(422);
      const wrongType = await bridge(t.bridgeHeaders(t.miner.hotkey), "x", "text/plain");
      expect(wrongType.status).toBe(415);
    });

    it("never read a refused body: its connection is closed and the server keeps serving", async () => {
      const { authorization: _drop, ...noBearer } = t.bridgeHeaders(t.miner.hotkey);
      for (const size of [100_000, 2_500_000]) {
        const refused = await bridge(noBearer, new Uint8Array(size), "application/zip");
        expect(refused.status).toBe(401);
        expect(refused.headers.get("connection")).toBe("close");
      }
      expect((await t.fetch("/health")).status).toBe(200);
    });

    it("refuse a file name that is not a plain name", async () => {
      for (const filename of ["../etc/passwd", ".env", "a/b.zip", "x\\y"]) {
        const response = await bridge(t.bridgeHeaders(t.miner.hotkey, { filename }));
        expect(await errorOf(response)).toMatchObject({ status: 400, code: "invalid_filename" });
      }
    });
  });

  describe("internal and custom-credential routes", () => {
    it("internal routes need the challenge token and the slug", async () => {
      const ok = await t.fetch("/internal/v1/worker/process-next", {
        method: "POST",
        headers: t.internalHeaders,
      });
      expect(ok.status).toBe(200);
      const anonymous = await t.fetch("/internal/v1/worker/process-next", { method: "POST" });
      expect(await errorOf(anonymous)).toMatchObject({
        status: 401,
        code: "invalid_internal_token",
      });
      expect(anonymous.headers.get("www-authenticate")).toBe("Bearer");
    });

    it("an internal route may judge its own bearer, and still needs the slug", async () => {
      const path = "/internal/v1/attempts/12/events";
      const post = (headers: Record<string, string>) =>
        t.fetch(path, {
          method: "POST",
          headers: { ...JSON_TYPE, ...headers },
          body: json({ line: "hi" }),
        });
      const slugHeader = { [PLATFORM_HEADERS.challengeSlug]: slug };
      expect(
        (await post({ ...slugHeader, authorization: `Bearer ${attemptToken("12")}` })).status,
      ).toBe(202);
      // The challenge token is not this route's credential, nor is another attempt's.
      expect((await post(t.internalHeaders)).status).toBe(401);
      expect(
        (await post({ ...slugHeader, authorization: `Bearer ${attemptToken("13")}` })).status,
      ).toBe(401);
      expect((await post({ authorization: `Bearer ${attemptToken("12")}` })).status).toBe(403);
    });

    it("a public route can carry its own bearer", async () => {
      const path = "/evaluation/v1/runs/r1/result";
      const post = (headers: Record<string, string>, body = json({ ok: true })) =>
        t.fetch(path, { method: "POST", headers: { ...JSON_TYPE, ...headers }, body });
      expect(await errorOf(await post({}, "{bad"))).toMatchObject({
        status: 401,
        code: "invalid_token",
      });
      expect(await errorOf(await post({ authorization: "Bearer nope" }))).toMatchObject({
        status: 401,
        code: "invalid_token",
      });
      const ok = await post({ authorization: "Bearer run-token-0123456789" });
      expect(await ok.json()).toEqual({ run_id: "r1", ok: true });
    });
  });

  describe("public routes", () => {
    it("validate the query and path in FastAPI's 422 shape", async () => {
      const response = await t.fetch("/v1/scores?limit=0");
      expect(response.status).toBe(422);
      expect(await response.json()).toEqual({
        detail: [{ loc: ["query", "limit"], msg: expect.any(String), type: "greater_than_equal" }],
      });
      const path = await t.fetch("/v1/scores/abc");
      expect(((await path.json()) as { detail: { loc: unknown[] }[] }).detail[0]?.loc).toEqual([
        "path",
        "id",
      ]);
    });

    it("answer an unexpected error with 500 and a request id, never the internals", async () => {
      const response = await t.fetch("/v1/boom", { headers: { "x-request-id": "req-boom-1" } });
      expect(response.status).toBe(500);
      const text = await response.text();
      expect(JSON.parse(text)).toEqual({
        detail: "Internal Server Error",
        code: "internal_error",
        request_id: "req-boom-1",
      });
      expect(text).not.toContain("hunter2");
    });
  });

  describe("maintenance", () => {
    it("prune() drops nonces older than 24 h and expired rate-limit rows, and nothing else", async () => {
      await t.sql`insert into sdk_nonces (hotkey, nonce, created_at)
        values ('old-key', ${newNonce()}, now() - interval '25 hours'),
               ('new-key', ${newNonce()}, now() - interval '23 hours')`;
      await t.sql`insert into sdk_rate_limits (bucket, hotkey, hits, window_seconds, updated_at)
        values ('b', 'expired', array[now() - interval '2 minutes'], 60, now() - interval '2 minutes'),
               ('b', 'live', array[now()], 60, now())`;
      const pruned = await t.runtime.prune();
      expect(pruned).toEqual({ nonces: 1, rateLimits: 1 });
      const keys =
        await t.sql`select hotkey from sdk_nonces where hotkey in ('old-key', 'new-key')`;
      expect(keys.map((r) => r["hotkey"])).toEqual(["new-key"]);
      const buckets = await t.sql`select hotkey from sdk_rate_limits where bucket = 'b'`;
      expect(buckets.map((r) => r["hotkey"])).toEqual(["live"]);
    });
  });
});

describe("lifecycle", () => {
  it("runs setup on start and its onClose cleanup on close", async () => {
    const before = { ...lifecycle };
    const t = await startTestChallenge(echoChallenge);
    expect(lifecycle.setups).toBe(before.setups + 1);
    await t.close();
    expect(lifecycle.closes).toBe(before.closes + 1);
  });
});
