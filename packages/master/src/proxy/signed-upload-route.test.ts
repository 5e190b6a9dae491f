import { createHash, randomBytes } from "node:crypto";
import { connect } from "node:net";
import {
  type Backend,
  canonicalRequestMessage,
  generateMnemonic,
  initCrypto,
  keypairFromMnemonic,
  newNonce,
  type Sr25519Keypair,
  sha256Hex,
  signRequest,
} from "@platform/core";
import { testBackends } from "@platform/core/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  deadOrigin,
  type EchoUpstream,
  rawRequest,
  rawSocket,
  readAll,
  startEchoUpstream,
} from "../../test/proxy/echo-upstream.js";
import { registerChallenge } from "../../test/proxy/register-challenge.js";
import { startTestMaster, type TestMaster } from "../../test/test-master.js";
import { BRIDGE_PATH } from "./signed-upload-route.js";

const LIMIT = 64 * 1024;
const PATH = "/v1/challenges/live/submissions";

interface Upload {
  path?: string;
  body?: Buffer | string;
  contentType?: string;
  headers?: Record<string, string>;
}

// Every case runs with signatures checked on the main thread, and once more through a verify
// pool (PLATFORM_PROXY_VERIFY_WORKERS): the pool must give the same verdict on every request.
const backends = await testBackends();
const variants: [Backend, number][] = [
  ...backends.map((backend): [Backend, number] => [backend, 0]),
  [backends[0]!, 2],
];

describe.each(variants)("signed submission upload on %s, %i verify workers", (backend, workers) => {
  let t: TestMaster;
  let up: EchoUpstream;
  let base: string;
  let challengeToken: string;
  let miner: Sr25519Keypair;
  let other: Sr25519Keypair;

  beforeAll(async () => {
    await initCrypto();
    miner = keypairFromMnemonic(generateMnemonic());
    other = keypairFromMnemonic(generateMnemonic());
    up = await startEchoUpstream();
    up.on(BRIDGE_PATH, async (req, res, seen) => {
      seen.body = await readAll(req);
      res.writeHead(201, { "content-type": "application/json", "x-challenge": "bridge" });
      res.end(JSON.stringify({ id: "sub-1", bytes: seen.body.length }));
    });
    t = await startTestMaster(backend, (config) => {
      config.proxy.uploadLimitBytes = LIMIT;
      config.proxy.timeoutMs = 2_000;
      config.proxy.verifyWorkers = workers;
    });
    base = (await t.listen()).url;
    challengeToken = await registerChallenge(t, "live", "active", up.url);
    await registerChallenge(t, "other", "active", up.url);
    await registerChallenge(t, "paused", "inactive", up.url);
    await registerChallenge(t, "dead", "active", await deadOrigin());
  });
  afterAll(async () => {
    await t.close();
    await up.close();
  });
  beforeEach(() => {
    up.seen.length = 0;
  });

  const zip = (size = 4096) =>
    Buffer.concat([Buffer.from("PK\x03\x04", "latin1"), randomBytes(size - 4)]);
  const sign = (
    body: Buffer | string,
    options: {
      path?: string;
      slug?: string;
      timestamp?: number;
      nonce?: string;
      pair?: Sr25519Keypair;
    } = {},
  ) =>
    signRequest(options.pair ?? miner, {
      method: "POST",
      url: options.path ?? PATH,
      body,
      slug: options.slug ?? "live",
      timestamp: options.timestamp,
      nonce: options.nonce,
    }) as unknown as Record<string, string>;
  const send = (signature: Record<string, string>, upload: Upload = {}) => {
    const body = upload.body ?? "";
    return rawRequest(base, {
      method: "POST",
      path: upload.path ?? PATH,
      headers: {
        "content-type": upload.contentType ?? "application/zip",
        "content-length": String(Buffer.byteLength(body)),
        ...signature,
        ...upload.headers,
      },
      body,
    });
  };
  const bridgeCalls = () => up.seenAt(BRIDGE_PATH);
  const nonceRows = async (nonce: string) =>
    (await t.master.database.sql`select hotkey from submission_nonces where nonce = ${nonce}`)
      .length;

  it("verifies, forwards to the bridge with the challenge bearer and the verified identity, and returns the answer", async () => {
    const body = zip();
    const path = `${PATH}?filename=agent.zip`;
    const signature = sign(body, { path });
    const res = await send(signature, { body, path, headers: { "x-request-id": "up-1" } });
    expect(res.status).toBe(201);
    expect(res.json()).toEqual({ id: "sub-1", bytes: body.length });
    expect(res.headers["x-challenge"]).toBe("bridge");

    const [call] = bridgeCalls();
    expect(up.seen).toHaveLength(1);
    expect(call!.method).toBe("POST");
    expect(call!.url).toBe(BRIDGE_PATH);
    expect(createHash("sha256").update(call!.body!).digest("hex")).toBe(sha256Hex(body));
    const message = canonicalRequestMessage({
      method: "POST",
      path,
      slug: "live",
      timestamp: Number(signature["X-Timestamp"]),
      nonce: signature["X-Nonce"]!,
      body,
    });
    expect(call!.headers).toMatchObject({
      authorization: [`Bearer ${challengeToken}`],
      "content-type": ["application/zip"],
      "x-platform-proxy": ["true"],
      "x-platform-challenge-slug": ["live"],
      "x-core-challenge-slug": ["live"],
      "x-platform-verified-hotkey": [miner.address],
      "x-core-verified-hotkey": [miner.address],
      "x-core-verified-nonce": [signature["X-Nonce"]],
      "x-core-request-hash": [sha256Hex(message)],
      "x-submission-filename": ["agent.zip"],
      "x-request-id": ["up-1"],
      "content-length": [String(body.length)],
    });
    for (const name of [
      "x-hotkey",
      "x-signature",
      "x-nonce",
      "x-timestamp",
      "x-admin-token",
      "cookie",
    ]) {
      expect(call!.headers[name], name).toBeUndefined();
    }
    expect(await nonceRows(signature["X-Nonce"]!)).toBe(1);
  });

  it("forwards a JSON submission with its content type", async () => {
    const body = JSON.stringify({ filename: "train.py", code: "print(1)", metadata: {} });
    const res = await send(sign(body), { body, contentType: "application/json; charset=utf-8" });
    expect(res.status).toBe(201);
    expect(bridgeCalls()[0]!.headers["content-type"]).toEqual(["application/json; charset=utf-8"]);
    expect(bridgeCalls()[0]!.body!.toString()).toBe(body);
  });

  it("overwrites identity headers a miner sends with the verified ones", async () => {
    const body = zip();
    const res = await send(sign(body), {
      body,
      headers: {
        "x-platform-verified-hotkey": other.address,
        "x-core-verified-hotkey": other.address,
        "x-core-verified-nonce": "forged-nonce-0123456789",
        "x-core-request-hash": "f".repeat(64),
        "x-core-challenge-slug": "other",
        "x-platform-challenge-slug": "other",
        authorization: "Bearer forged-token",
      },
    });
    expect(res.status).toBe(201);
    const { headers } = bridgeCalls()[0]!;
    expect(headers["x-platform-verified-hotkey"]).toEqual([miner.address]);
    expect(headers["x-core-verified-hotkey"]).toEqual([miner.address]);
    expect(headers["x-core-verified-nonce"]).not.toContain("forged-nonce-0123456789");
    expect(headers["x-core-request-hash"]).not.toContain("f".repeat(64));
    expect(headers["x-core-challenge-slug"]).toEqual(["live"]);
    expect(headers["x-platform-challenge-slug"]).toEqual(["live"]);
    expect(headers.authorization).toEqual([`Bearer ${challengeToken}`]);
  });

  it("answers a replay 409 nonce_reused and forwards it once", async () => {
    const body = zip();
    const signature = sign(body);
    expect((await send(signature, { body })).status).toBe(201);
    const replay = await send(signature, { body });
    expect(replay.status).toBe(409);
    expect(replay.json()).toMatchObject({ code: "nonce_reused" });
    expect(bridgeCalls()).toHaveLength(1);
  });

  it("accepts exactly one of many concurrent identical uploads", async () => {
    const body = zip();
    const signature = sign(body);
    const results = await Promise.all(Array.from({ length: 25 }, () => send(signature, { body })));
    const statuses = results.map((res) => res.status).sort();
    expect(statuses).toEqual([201, ...Array(24).fill(409)]);
    expect(bridgeCalls()).toHaveLength(1);
    expect(await nonceRows(signature["X-Nonce"]!)).toBe(1);
  });

  it("gives each of many uploads in flight its own verdict, good and forged interleaved", async () => {
    // Verdicts come back in batches from the pool: a mix-up would let a forged upload through.
    const uploads = Array.from({ length: 24 }, (_, i) => {
      const body = zip(512);
      const signature = sign(body);
      if (i % 2 === 0) return { body, signature, good: true };
      const forged = Buffer.from(body);
      forged[10] = forged[10]! ^ 0xff;
      return { body: forged, signature, good: false };
    });
    const results = await Promise.all(uploads.map((u) => send(u.signature, { body: u.body })));
    expect(results.map((res) => res.status)).toEqual(uploads.map((u) => (u.good ? 201 : 401)));
    expect(bridgeCalls()).toHaveLength(12);
    const forwarded = new Set(bridgeCalls().map((call) => sha256Hex(call.body!)));
    for (const upload of uploads) expect(forwarded.has(sha256Hex(upload.body))).toBe(upload.good);
  });

  it("keys nonces by hotkey: another miner may use the same nonce", async () => {
    const nonce = newNonce();
    const body = zip();
    expect((await send(sign(body, { nonce }), { body })).status).toBe(201);
    expect((await send(sign(body, { nonce, pair: other }), { body })).status).toBe(201);
  });

  describe("refused signatures (401), with nothing forwarded and no nonce spent", () => {
    it("refuses a tampered body, then accepts the same nonce with the signed body", async () => {
      const body = zip();
      const signature = sign(body);
      const tampered = Buffer.from(body);
      tampered[100] = tampered[100]! ^ 0xff;
      const res = await send(signature, { body: tampered });
      expect(res.status).toBe(401);
      expect(res.json()).toMatchObject({ code: "bad_signature" });
      expect(bridgeCalls()).toHaveLength(0);
      expect(await nonceRows(signature["X-Nonce"]!)).toBe(0);
      expect((await send(signature, { body })).status).toBe(201);
    });

    it.each([
      ["a query the signature does not cover", { path: PATH }, `${PATH}?extra=1`],
      ["a query removed from the signed path", { path: `${PATH}?filename=a.zip` }, PATH],
      [
        "another challenge's path",
        { path: "/v1/challenges/other/submissions", slug: "other" },
        PATH,
      ],
      ["a request signed for another slug", { slug: "other" }, PATH],
      ["a request signed for live but sent to other", {}, "/v1/challenges/other/submissions"],
    ])("refuses %s", async (_label, signOptions, sentPath) => {
      const body = zip();
      const res = await send(sign(body, signOptions), { body, path: sentPath });
      expect(res.status).toBe(401);
      expect(res.json()).toMatchObject({ code: "bad_signature" });
      expect(bridgeCalls()).toHaveLength(0);
    });

    it.each([
      ["expired", -301],
      ["from the future", 400],
    ])("refuses a timestamp %s", async (_label, offset) => {
      const body = zip();
      const res = await send(sign(body, { timestamp: Math.floor(Date.now() / 1000) + offset }), {
        body,
      });
      expect(res.status).toBe(401);
      expect(res.json()).toMatchObject({ code: "timestamp_out_of_window" });
    });

    it("refuses a signature presented under another hotkey", async () => {
      const body = zip();
      const signature = { ...sign(body), "X-Hotkey": other.address };
      const res = await send(signature, { body });
      expect(res.status).toBe(401);
      expect(res.json()).toMatchObject({ code: "bad_signature" });
    });

    it.each(["X-Hotkey", "X-Signature", "X-Nonce", "X-Timestamp"])(
      "refuses a request without %s",
      async (name) => {
        const body = zip();
        const signature = sign(body);
        delete signature[name];
        const res = await send(signature, { body });
        expect(res.status).toBe(401);
        expect(res.json()).toMatchObject({ code: "missing_signature_headers" });
      },
    );

    it("refuses a malformed hotkey and signature with the verifier's codes", async () => {
      const body = zip();
      expect(
        (await send({ ...sign(body), "X-Hotkey": "not-an-address" }, { body })).json(),
      ).toMatchObject({
        code: "invalid_hotkey",
      });
      expect(
        (await send({ ...sign(body), "X-Signature": "0x1234" }, { body })).json(),
      ).toMatchObject({
        code: "malformed_signature",
      });
      expect(bridgeCalls()).toHaveLength(0);
    });
  });

  describe("limits and input", () => {
    it("accepts a body of exactly the limit and answers 413 past it, spending no nonce", async () => {
      const exact = zip(LIMIT);
      expect((await send(sign(exact), { body: exact })).status).toBe(201);
      const over = zip(LIMIT + 1);
      const signature = sign(over);
      const res = await send(signature, { body: over });
      expect(res.status).toBe(413);
      expect(res.json()).toMatchObject({ code: "payload_too_large" });
      expect(bridgeCalls()).toHaveLength(1);
      expect(await nonceRows(signature["X-Nonce"]!)).toBe(0);
    });

    it("answers 413 for a chunked body past the limit", async () => {
      const over = zip(LIMIT + 10);
      // A raw socket, so the answer is read even when the server cuts the upload right after
      // sending it (a write error then must not stand in for the status: only the bytes count).
      const answer = await new Promise<string>((resolve) => {
        const { hostname, port } = new URL(base);
        const received: Buffer[] = [];
        const socket = connect(Number(port), hostname, () => {
          const head = Object.entries({ "content-type": "application/zip", ...sign(over) })
            .map(([name, value]) => `${name}: ${value}\r\n`)
            .join("");
          socket.write(
            `POST ${PATH} HTTP/1.1\r\nhost: ${hostname}\r\n${head}transfer-encoding: chunked\r\n\r\n`,
          );
          for (const part of [over.subarray(0, LIMIT / 2), over.subarray(LIMIT / 2)]) {
            socket.write(`${part.length.toString(16)}\r\n`);
            socket.write(part);
            socket.write("\r\n");
          }
          socket.write("0\r\n\r\n");
        });
        socket.on("data", (chunk) => received.push(chunk));
        socket.on("error", () => {}); // EPIPE/ECONNRESET after the answer: read what came
        socket.on("close", () => resolve(Buffer.concat(received).toString("latin1")));
        socket.setTimeout(10_000, () => socket.destroy());
      });
      expect(answer).toMatch(/^HTTP\/1\.1 413 /);
      expect(answer).toContain('"code":"payload_too_large"');
      expect(bridgeCalls()).toHaveLength(0);
    });

    it("answers 415 for a media type other than zip or JSON", async () => {
      const body = "plain";
      const res = await send(sign(body), { body, contentType: "text/plain" });
      expect(res.status).toBe(415);
      expect(res.json()).toMatchObject({ code: "unsupported_media_type" });
    });

    it.each([
      "../evil.zip",
      "a/b.zip",
      "a\\b.zip",
      ".hidden",
      "..",
      "a\tb.zip",
      `${"a".repeat(256)}.zip`,
    ])("answers 400 invalid_filename for %j", async (filename) => {
      const body = zip();
      const path = `${PATH}?${new URLSearchParams({ filename })}`;
      const res = await send(sign(body, { path }), { body, path });
      expect(res.status).toBe(400);
      expect(res.json()).toMatchObject({ code: "invalid_filename" });
      expect(bridgeCalls()).toHaveLength(0);
    });

    it("takes the file name from the signed query first", async () => {
      const body = zip();
      const path = `${PATH}?filename=signed%20name.zip`;
      const res = await send(sign(body, { path }), {
        body,
        path,
        headers: { "x-submission-filename": "header.zip" },
      });
      expect(res.status).toBe(201);
      expect(bridgeCalls()[0]!.headers["x-submission-filename"]).toEqual(["signed name.zip"]);
    });

    it("never forwards an unsigned file name: the X-Submission-Filename header is ignored", async () => {
      // Issue 10 item 4: signed without a name, sent with the header, it reached the bridge.
      const body = zip();
      const res = await send(sign(body), {
        body,
        headers: { "x-submission-filename": "attacker.zip" },
      });
      expect(res.status).toBe(201);
      expect(bridgeCalls()).toHaveLength(1);
      expect(bridgeCalls()[0]!.headers["x-submission-filename"]).toBeUndefined();
    });

    it("refuses a repeated query key (400 duplicate_query_key), whatever order was signed", async () => {
      // Issue 10 item 5: signed ?filename=good.zip&filename=evil.zip, sent swapped, verified
      // (the canonical query sorts values) and the bridge got evil.zip (the first value).
      const body = zip();
      const signed = `${PATH}?filename=good.zip&filename=evil.zip`;
      for (const path of [signed, `${PATH}?filename=evil.zip&filename=good.zip`]) {
        const signature = sign(body, { path: signed });
        const res = await send(signature, { body, path });
        expect(res.status).toBe(400);
        expect(res.json()).toMatchObject({ code: "duplicate_query_key" });
        expect(await nonceRows(signature["X-Nonce"]!)).toBe(0);
      }
      expect(bridgeCalls()).toHaveLength(0);
    });

    it("answers a repeated signature header missing_signature_headers, as signing.md says", async () => {
      // Issue 10 item 9: two X-Nonce headers were answered invalid_nonce.
      const body = zip();
      const signature = sign(body);
      const head = Object.entries({ "content-type": "application/zip", ...signature })
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join("");
      const { hostname, port } = new URL(base);
      const answer = await rawSocket(
        base,
        `POST ${PATH} HTTP/1.1\r\nhost: ${hostname}:${port}\r\n${head}x-nonce: ${newNonce()}\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body.toString("latin1")}`,
      );
      expect(answer).toMatch(/^HTTP\/1\.1 401 /);
      expect(answer).toContain('"code":"missing_signature_headers"');
      expect(bridgeCalls()).toHaveLength(0);
    });
  });

  describe("unavailable challenges", () => {
    it.each([
      ["ghost", 404, "challenge_not_found"],
      ["paused", 404, "challenge_not_found"],
    ])("answers %s with %i and spends no nonce", async (slug, status, code) => {
      const body = zip();
      const path = `/v1/challenges/${slug}/submissions`;
      const signature = sign(body, { path, slug });
      const res = await send(signature, { body, path });
      expect(res.status).toBe(status);
      expect(res.json()).toMatchObject({ code });
      expect(await nonceRows(signature["X-Nonce"]!)).toBe(0);
      expect(up.seen).toHaveLength(0);
    });

    it("answers a one-character slug 404 before it verifies anything (the spec needs two)", async () => {
      const body = zip();
      const path = "/v1/challenges/a/submissions";
      // No valid message names slug "a": the miner can only have signed it for no challenge.
      const signature = sign(body, { path });
      const res = await send(signature, { body, path });
      expect(res.status).toBe(404);
      expect(res.json()).toMatchObject({ code: "challenge_not_found" });
      expect(await nonceRows(signature["X-Nonce"]!)).toBe(0);
      expect(up.seen).toHaveLength(0);
    });

    it("answers 502 when the challenge is unreachable; the nonce is spent", async () => {
      const body = zip();
      const path = "/v1/challenges/dead/submissions";
      const signature = sign(body, { path, slug: "dead" });
      const res = await send(signature, { body, path });
      expect(res.status).toBe(502);
      expect(res.json()).toMatchObject({ code: "upstream_unavailable" });
      expect(res.text).not.toContain("127.0.0.1");
      expect(await nonceRows(signature["X-Nonce"]!)).toBe(1);
    });
  });
});
