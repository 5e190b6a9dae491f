// router.submission over a real socket: one declaration that a miner reaches by signing and the
// master reaches through its bridge, with one handler, one identity check and one count.
import { defineChallenge, json, type SubmissionMiner, Type } from "@platform/challenge-sdk";
import {
  createMinerKey,
  startTestChallenge,
  type TestChallenge,
} from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, expectTypeOf, it } from "vitest";

const Bundle = Type.Object({ files: Type.Array(Type.String()) }, { additionalProperties: false });
const banned = new Set<string>();

const challenge = defineChallenge({
  slug: "bundles",
  version: "1.0.0",
  setup: () => ({ received: [] as { via: string; type: string; bytes: number }[] }),
  routes: (router) => {
    // JSON or a ZIP, either way in.
    router.submission({
      path: "/v1/submissions",
      body: Bundle,
      raw: ["application/zip", "application/gzip"],
      bodyLimit: 1024,
      registered: (hotkey) => !banned.has(hotkey),
      rateLimit: { limit: 3, windowSeconds: 60 },
      handler: (ctx) => {
        expectTypeOf(ctx.miner).toEqualTypeOf<SubmissionMiner>();
        if (ctx.body === undefined) {
          expectTypeOf(ctx.mediaType).toEqualTypeOf<"application/zip" | "application/gzip">();
        } else {
          expectTypeOf(ctx.body).toEqualTypeOf<{ files: string[] }>();
          expectTypeOf(ctx.mediaType).toEqualTypeOf<"application/json">();
        }
        ctx.state.received.push({
          via: ctx.miner.via,
          type: ctx.mediaType,
          bytes: ctx.rawBody.byteLength,
        });
        return json(
          {
            via: ctx.miner.via,
            hotkey: ctx.miner.hotkey,
            nonce: ctx.miner.nonce,
            hash: ctx.miner.requestHash,
            filename: ctx.filename,
            type: ctx.mediaType,
            files: ctx.body?.files ?? null,
            bytes: ctx.rawBody.byteLength,
          },
          { status: 201 },
        );
      },
    });
    // Raw only, with its own bridge path: no JSON body at all.
    router.submission({
      method: "PUT",
      path: "/v1/artifacts",
      bridgePath: "/internal/v1/bridge/artifacts",
      raw: ["application/octet-stream"],
      handler: (ctx) => {
        expectTypeOf(ctx.body).toEqualTypeOf<undefined>();
        return { via: ctx.miner.via, bytes: ctx.rawBody.byteLength };
      },
    });
  },
  weights: () => ({}),
});

describe("router.submission", () => {
  let t: TestChallenge<unknown>;
  beforeAll(async () => {
    t = await startTestChallenge(challenge);
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    banned.clear();
    await t.sql`delete from sdk_rate_limits`;
  });

  const zip = new Uint8Array([0x50, 0x4b, 3, 4, 1, 2, 3]);
  const signedJson = (files: string[], miner = t.miner) =>
    t.signedFetch("/v1/submissions", { method: "POST", json: { files }, miner });
  const bridged = (
    body: string | Uint8Array,
    type: string,
    hotkey = t.miner.hotkey,
    path = "/internal/v1/bridge/submissions",
    method = "POST",
  ) =>
    t.fetch(path, {
      method,
      headers: { "content-type": type, ...t.bridgeHeaders(hotkey, { filename: "bundle.zip" }) },
      body: typeof body === "string" ? body : new Uint8Array(body),
    });

  it("takes a signed JSON submission: via signed, the signed nonce and hash, no file name", async () => {
    const response = await signedJson(["a.py"]);
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({
      via: "signed",
      hotkey: t.miner.hotkey,
      nonce: expect.any(String),
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      filename: null,
      type: "application/json",
      files: ["a.py"],
      bytes: JSON.stringify({ files: ["a.py"] }).length,
    });
  });

  it("takes a signed ZIP as raw bytes: body undefined, the signed bytes in rawBody", async () => {
    const response = await t.signedFetch("/v1/submissions", {
      method: "POST",
      body: zip,
      headers: { "content-type": "application/zip" },
    });
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({
      via: "signed",
      type: "application/zip",
      files: null,
      bytes: zip.byteLength,
    });
  });

  it("takes the same submission from the master's bridge, JSON or raw, with the file name", async () => {
    const miner = await createMinerKey();
    const asJson = await bridged(
      JSON.stringify({ files: ["b.py"] }),
      "application/json",
      miner.hotkey,
    );
    expect(asJson.status).toBe(201);
    expect(await asJson.json()).toMatchObject({
      via: "bridge",
      hotkey: miner.hotkey,
      filename: "bundle.zip",
      type: "application/json",
      files: ["b.py"],
    });
    const asZip = await bridged(zip, "application/gzip", miner.hotkey);
    expect(await asZip.json()).toMatchObject({
      via: "bridge",
      type: "application/gzip",
      files: null,
    });
  });

  it("validates JSON and media types the same way on both ways in", async () => {
    const badJson = await t.signedFetch("/v1/submissions", {
      method: "POST",
      json: { files: "not-a-list" },
    });
    expect(badJson.status).toBe(422);
    expect((await bridged(JSON.stringify({ files: 1 }), "application/json")).status).toBe(422);
    const text = await t.signedFetch("/v1/submissions", {
      method: "POST",
      body: "x",
      headers: { "content-type": "text/plain" },
    });
    expect(text.status).toBe(415);
    expect(await text.json()).toMatchObject({ code: "unsupported_media_type" });
    expect((await bridged("x", "text/plain")).status).toBe(415);
    expect((await bridged(new Uint8Array(2048), "application/zip")).status).toBe(413);
  });

  it("still authenticates each way: unsigned is 401, a bridge without the token is 401", async () => {
    const unsigned = await t.fetch("/v1/submissions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ files: [] }),
    });
    expect(unsigned.status).toBe(401);
    const { authorization: _drop, ...noBearer } = t.bridgeHeaders(t.miner.hotkey);
    const anonymous = await t.fetch("/internal/v1/bridge/submissions", {
      method: "POST",
      headers: { "content-type": "application/json", ...noBearer },
      body: JSON.stringify({ files: [] }),
    });
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ code: "invalid_internal_token" });
  });

  it("applies `registered` to both ways in", async () => {
    banned.add(t.miner.hotkey);
    const signed = await signedJson(["x"]);
    expect(signed.status).toBe(403);
    expect(await signed.json()).toMatchObject({ code: "hotkey_not_registered" });
    const bridge = await bridged(zip, "application/zip");
    expect(bridge.status).toBe(403);
  });

  it("counts both ways in against ONE limit by default", async () => {
    const miner = await createMinerKey();
    expect((await signedJson(["1"], miner)).status).toBe(201);
    expect((await bridged(zip, "application/zip", miner.hotkey)).status).toBe(201);
    expect((await signedJson(["3"], miner)).status).toBe(201);
    const limited = await bridged(zip, "application/zip", miner.hotkey);
    expect(limited.status).toBe(429);
    expect((await signedJson(["5"], miner)).status).toBe(429);
  });

  it("serves a raw-only submission at its own paths and method", async () => {
    const signed = await t.signedFetch("/v1/artifacts", {
      method: "PUT",
      body: zip,
      headers: { "content-type": "application/octet-stream" },
    });
    expect(await signed.json()).toEqual({ via: "signed", bytes: zip.byteLength });
    const bridge = await bridged(
      zip,
      "application/octet-stream",
      t.miner.hotkey,
      "/internal/v1/bridge/artifacts",
      "PUT",
    );
    expect(await bridge.json()).toEqual({ via: "bridge", bytes: zip.byteLength });
    expect(
      (
        await bridged(
          JSON.stringify({}),
          "application/json",
          t.miner.hotkey,
          "/internal/v1/bridge/artifacts",
          "PUT",
        )
      ).status,
    ).toBe(415);
  });

  it("keeps what the handler records in the instance's state", () => {
    const state = t.runtime.state as { received: { via: string }[] };
    expect(state.received.map((entry) => entry.via)).toEqual(
      expect.arrayContaining(["signed", "bridge"]),
    );
  });

  it("lists both routes, and documents both with JSON and the raw types", async () => {
    expect(
      challenge
        .routes()
        .filter((route) => route.path.includes("submissions"))
        .map((route) => [
          route.access,
          route.methods[0],
          route.path,
          route.body,
          route.contentTypes,
        ]),
    ).toEqual([
      ["signed", "POST", "/v1/submissions", "json", ["application/zip", "application/gzip"]],
      [
        "bridge",
        "POST",
        "/internal/v1/bridge/submissions",
        "json",
        ["application/zip", "application/gzip"],
      ],
    ]);
    const doc = (await (await t.fetch("/openapi.json")).json()) as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
    };
    const signed = doc.paths["/v1/submissions"]?.["post"] as {
      security: unknown;
      requestBody: { content: Record<string, unknown> };
    };
    const bridge = doc.paths["/internal/v1/bridge/submissions"]?.["post"] as {
      security: unknown;
      parameters: { name: string }[];
      requestBody: { content: Record<string, unknown> };
    };
    expect(signed.security).toEqual([{ minerSignature: [] }]);
    expect(bridge.security).toEqual([{ challengeToken: [] }]);
    for (const operation of [signed, bridge]) {
      expect(Object.keys(operation.requestBody.content)).toEqual([
        "application/json",
        "application/zip",
        "application/gzip",
      ]);
    }
    expect(bridge.parameters.map((p) => p.name)).toContain("x-submission-filename");
    const artifacts = doc.paths["/v1/artifacts"]?.["put"] as {
      requestBody: { content: Record<string, unknown> };
    };
    expect(Object.keys(artifacts.requestBody.content)).toEqual(["application/octet-stream"]);
  });
});
