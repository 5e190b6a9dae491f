// No secret ever reaches a log line, even when a challenge author logs carelessly: the admin
// token, the scrape token, a challenge's own and broker tokens, bearer values and a miner's
// mnemonic. A master (debug level) and an SDK challenge (LOG_LEVEL=debug) run real traffic
// through the proxy, the bridge, the admin API, /metrics and the weights collection; every line
// they write is captured and must be JSON and free of every secret.
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineChallenge, json, type RunningChallenge, Type } from "@platform/challenge-sdk";
import {
  createLogger,
  type Database,
  generateMnemonic,
  initCrypto,
  keypairFromMnemonic,
  signRequest,
} from "@platform/core";
import { createTestDatabase } from "@platform/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadMasterConfig } from "../../src/config.js";
import { createMaster, type Master, type MasterServer } from "../../src/master.js";
import { rawRequest } from "../proxy/echo-upstream.js";

const ADMIN_TOKEN = `Adm1n-${randomBytes(16).toString("hex")}`;
const METRICS_TOKEN = `scrape-${randomBytes(16).toString("hex")}`;
const MNEMONIC = generateMnemonic();

describe("logs never carry a secret", () => {
  const lines: string[] = [];
  const realWrite = process.stderr.write.bind(process.stderr);
  let database: Database;
  let master: Master;
  let server: MasterServer;
  let running: RunningChallenge;
  let tokens: { challenge_token: string; docker_broker_token: string };

  beforeAll(async () => {
    await initCrypto();
    // The challenge's logger writes to stderr: capture it (and pass it on).
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      lines.push(...String(chunk).split("\n").filter(Boolean));
      return (realWrite as (...args: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof process.stderr.write;
    database = await createTestDatabase({ backend: "pglite" });
    const config = loadMasterConfig(
      { dataDir: mkdtempSync(join(tmpdir(), "platform-logs-")), port: 0 },
      { ADMIN_TOKEN, PLATFORM_METRICS_TOKEN: METRICS_TOKEN },
    );
    config.weights.intervalSeconds = 0;
    config.imagePolicy = {
      allowedPrefixes: ["ghcr.io/"],
      requireTagOrDigest: true,
      forbidLatest: true,
    };
    master = await createMaster(config, {
      database,
      masterKey: randomBytes(32),
      logger: createLogger({ name: "logs-master", level: "debug", write: (l) => lines.push(l) }),
    });
    server = await master.listen({ host: "127.0.0.1", port: 0, adminHost: "127.0.0.1" });
    const created = await fetch(`${server.admin.url}/v1/admin/challenges`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_TOKEN}` },
      body: JSON.stringify({
        slug: "careless",
        name: "careless",
        image: "ghcr.io/org/careless:1",
        version: "1",
        status: "draft",
      }),
    });
    expect(created.status).toBe(201);
    tokens = await created.json();

    // An author who logs everything a request carries, and throws with a token in the message.
    const challenge = defineChallenge({
      slug: "careless",
      version: "1",
      weights: () => ({}),
      routes: (router) =>
        router
          .public({
            method: "GET",
            path: "/v1/echo",
            query: Type.Object({ note: Type.Optional(Type.String()) }),
            handler: ({ request, query, log, settings }) => {
              log.info("request headers", { headers: Object.fromEntries(request.headers) });
              log.warn(`caller sent ${request.headers.get("authorization")} with ${query.note}`);
              log.debug(`my own tokens are ${settings.challengeToken} and ${settings.brokerToken}`);
              if (query.note === "fail")
                throw new Error(`upstream refused ${settings.challengeToken}`);
              return { ok: true };
            },
          })
          .submission({
            path: "/v1/submissions",
            body: Type.Object({ answer: Type.Integer() }),
            handler: ({ miner, request, log }) => {
              log.info("submission", { miner, headers: Object.fromEntries(request.headers) });
              return json({ ok: true }, { status: 201 });
            },
          }),
    });
    running = await challenge.start({
      host: "127.0.0.1",
      port: 0,
      memory: true,
      env: {
        CHALLENGE_TOKEN: tokens.challenge_token,
        BROKER_TOKEN: tokens.docker_broker_token,
        LOG_LEVEL: "debug",
      },
    });
    const activated = await fetch(`${server.admin.url}/v1/admin/challenges/careless`, {
      method: "PATCH",
      headers: { "content-type": "application/json", "x-admin-token": ADMIN_TOKEN },
      body: JSON.stringify({ status: "active", internal_base_url: running.url }),
    });
    expect(activated.status).toBe(200);
  });
  afterAll(async () => {
    process.stderr.write = realWrite;
    await running?.close();
    await master?.close();
    await database?.close();
  });

  it("writes only JSON lines, none of them with a token, a bearer value or a mnemonic", async () => {
    const admin = server.admin.url;
    // Admin API with the right token, and with near misses.
    await fetch(`${admin}/v1/admin/challenges`, { headers: { "x-admin-token": ADMIN_TOKEN } });
    await fetch(`${admin}/v1/admin/challenges`, {
      headers: { "x-admin-token": `${ADMIN_TOKEN}x` },
    });
    // Scrapes, right and wrong.
    await fetch(`${admin}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    await fetch(`${admin}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}y` } });
    // The proxy, with every credential a client might wrongly send, and an author who logs it.
    for (const credential of [ADMIN_TOKEN, tokens.challenge_token, tokens.docker_broker_token]) {
      await rawRequest(server.url, {
        path: `/challenges/careless/v1/echo?note=${encodeURIComponent(MNEMONIC)}`,
        headers: { authorization: `Bearer ${credential}` },
      });
    }
    expect(
      (await rawRequest(server.url, { path: "/challenges/careless/v1/echo?note=fail" })).status,
    ).toBe(500);
    // A signed upload through the master (the bridge carries the challenge token).
    const miner = keypairFromMnemonic(MNEMONIC);
    const path = "/v1/challenges/careless/submissions";
    const body = JSON.stringify({ answer: 42 });
    const signed = signRequest(miner, { method: "POST", url: path, body, slug: "careless" });
    const upload = await rawRequest(server.url, {
      method: "POST",
      path,
      headers: {
        ...(signed as unknown as Record<string, string>),
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(body)),
      },
      body,
    });
    expect(upload.status).toBe(201);
    // The weights collection presents the challenge token.
    await fetch(`${admin}/v1/admin/weights/collect`, {
      method: "POST",
      headers: { "x-admin-token": ADMIN_TOKEN },
    });

    const logged = lines.filter((line) => line.trim().startsWith("{"));
    expect(logged.length).toBeGreaterThan(10);
    // Every line our loggers wrote is one JSON object.
    for (const line of logged) expect(() => JSON.parse(line), line).not.toThrow();
    // The author's careless lines were written, only without the secrets.
    expect(logged.some((line) => line.includes("request headers"))).toBe(true);
    expect(logged.some((line) => line.includes("upstream refused"))).toBe(true);
    const text = lines.join("\n");
    const secrets = {
      "the admin token": ADMIN_TOKEN,
      "the metrics token": METRICS_TOKEN,
      "the challenge token": tokens.challenge_token,
      "the broker token": tokens.docker_broker_token,
      "the miner's signature": (signed as unknown as Record<string, string>)["X-Signature"]!,
      "the mnemonic": MNEMONIC,
      "four words of the mnemonic": MNEMONIC.split(" ").slice(4, 8).join(" "),
      "the mnemonic, URL-encoded": encodeURIComponent(MNEMONIC),
    };
    for (const [what, secret] of Object.entries(secrets)) {
      expect(text.includes(secret), `${what} appears in the logs`).toBe(false);
    }
    expect(text).not.toMatch(/bearer\s+(?!\[redacted\])[A-Za-z0-9]/i);
  });
});
