import { testBackends } from "@platform/core";
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
      env: { MODE: "x" },
    });
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
