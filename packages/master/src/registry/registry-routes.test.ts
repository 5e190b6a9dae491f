import { testBackends } from "@platform/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonInit, startTestMaster, type TestMaster } from "../../test/test-master.js";

describe.each(await testBackends())("public registry on %s", (backend) => {
  let t: TestMaster;
  const tokens: string[] = [];
  beforeAll(async () => {
    t = await startTestMaster(backend, (config) => {
      config.network = "testnet";
    });
    for (const [slug, status] of [
      ["live", "active"],
      ["paused", "inactive"],
      ["banned", "disabled"],
      ["wip", "draft"],
    ] as const) {
      const res = await t.fetch(
        "/v1/admin/challenges",
        jsonInit(
          "POST",
          {
            slug,
            name: slug,
            image: "ghcr.io/org/c:1.0",
            version: "1.0",
            status,
            emission_percent: 25,
            internal_base_url: `http://${slug}.internal:9000`,
            env: { MODE: "x", OPENAI_API_KEY: "sk-env-secret" },
            secrets: { DB_PASSWORD: "super-secret-value" },
            metadata: {
              homepage: "https://example.org",
              internal_notes: "do not show",
              api_token: "meta-secret",
            },
          },
          t.admin,
        ),
      );
      const body = await res.json();
      tokens.push(body.challenge_token, body.docker_broker_token);
    }
  });
  afterAll(() => t.close());

  it("lists every challenge but drafts, with no credential", async () => {
    const res = await t.fetch("/v1/registry");
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ network: "testnet", api_version: "1.0", master_uid: 0 });
    expect(body.challenges.map((c: { slug: string }) => c.slug)).toEqual([
      "banned",
      "live",
      "paused",
    ]);
    expect(body.challenges[1]).toMatchObject({
      status: "active",
      public_proxy_base_path: "/challenges/live",
      internal_base_url: "http://live.internal:9000",
      secrets: ["DB_PASSWORD"],
      metadata: { homepage: "https://example.org" },
      // Names only: a value configures a container and is where connection strings end up.
      env: { MODE: null, OPENAI_API_KEY: null },
    });
  });

  it("withholds nested secrets, credential URLs and key-shaped values at every depth", async () => {
    // Issue 10 item 2: all of these came back from the unauthenticated registry.
    const leaks = {
      nestedToken: "nested-api-token-value",
      dbPassword: "PASSWORD-in-db-url",
      redis: "hunter2",
      userinfo: "url-userinfo-pass",
      sk: "sk-proj-0123456789abcdefABCDEF",
      arrayed: "arrayed-secret-value",
      deep: "deep-password-value",
    };
    await t.master.store.create({
      slug: "leaky",
      name: "leaky",
      image: "ghcr.io/org/c:1.0",
      version: "1.0",
      status: "active",
      emission_percent: 0,
      api_version: "1.0",
      // Written around the admin API (which now refuses userinfo): the view must still hide it.
      internal_base_url: `http://svc:${leaks.userinfo}@leaky.internal:9000`,
      env: { REDIS_URL: `redis://:${leaks.redis}@r:6379`, MODE: "x" },
      metadata: {
        config: { api_token: leaks.nestedToken, region: "eu" },
        db_url: `postgres://u:${leaks.dbPassword}@db/x`,
        openai: leaks.sk,
        mirrors: ["https://mirror.example", `https://bot:${leaks.arrayed}@git.example/x`],
        a: { b: { c: { Password: leaks.deep, kept: "yes" } } },
        author: "someone",
      },
    });
    const res = await t.fetch("/v1/registry");
    const text = await res.text();
    for (const [what, secret] of Object.entries(leaks)) expect(text, what).not.toContain(secret);
    const leaky = (JSON.parse(text) as { challenges: Record<string, unknown>[] }).challenges.find(
      (c) => c["slug"] === "leaky",
    );
    expect(leaky).toMatchObject({
      internal_base_url: "http://leaky.internal:9000/",
      env: { MODE: null, REDIS_URL: null },
      metadata: {
        config: { region: "eu" },
        mirrors: ["https://mirror.example"],
        a: { b: { c: { kept: "yes" } } },
        author: "someone",
      },
    });
    expect(leaky!["metadata"]).not.toHaveProperty("db_url");
    expect(leaky!["metadata"]).not.toHaveProperty("openai");
  });

  it("never leaks a token, a secret value or a sensitive metadata key", async () => {
    const text = await (await t.fetch("/v1/registry")).text();
    for (const secret of [
      ...tokens,
      "super-secret-value",
      "sk-env-secret",
      "do not show",
      "meta-secret",
      "token_hash",
      "salt",
    ]) {
      expect(text).not.toContain(secret);
    }
  });
});
