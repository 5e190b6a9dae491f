import { randomBytes } from "node:crypto";
import { hashToken } from "@platform/core";
import { testBackends } from "@platform/core/testing";
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  brokerTestConfig,
  createChallenge,
  dockerForTests,
  eventually,
  IMAGES,
  leftoversOf,
  type TestChallenge,
} from "../../test/broker/docker-test-env.js";
import { startTestMaster, type TestMaster } from "../../test/test-master.js";
import { brokerOf } from "../broker/broker-routes.js";
import { challengeContainerName } from "./challenge-containers.js";

const env = await dockerForTests();

describe.skipIf(!env).each(await testBackends())("challenge runtime on %s", (backend) => {
  const docker = env?.docker as Docker;
  const run = randomBytes(3).toString("hex");
  const network = `platform-test-${run}`;
  let t: TestMaster;
  let base: string;
  let c: TestChallenge;
  let masterId: string;
  const slugs: string[] = [];

  beforeAll(async () => {
    t = await startTestMaster(
      backend,
      brokerTestConfig("engine", (config) => {
        config.broker.dockerNetwork = network;
        config.broker.masterUrl = "http://master.test:8080";
      }),
    );
    base = (await t.listen()).admin.url;
    masterId = await brokerOf(t.master.context)!.ledger.instanceId();
    c = await challenge(`rt-${backend}-${run}`, {
      env: { MODE: "test" },
      secrets: { API_KEY: "s3cret-value-never-shown" },
    });
  });
  afterAll(async () => {
    for (const slug of slugs)
      await docker
        .getContainer(challengeContainerName(slug))
        .remove({ force: true })
        .catch(() => {});
    await docker
      .getNetwork(network)
      .remove()
      .catch(() => {});
    await t?.close();
    if (t) expect(await leftoversOf(docker, masterId, false)).toEqual([]);
  });

  async function challenge(
    slug: string,
    extra: Record<string, unknown> = {},
  ): Promise<TestChallenge> {
    slugs.push(slug);
    return createChallenge(t, slug, extra);
  }
  const call = (
    method: string,
    slug: string,
    op: string,
    headers: Record<string, string> = t.admin,
    query = "",
  ) => fetch(`${base}/v1/admin/challenges/${slug}/${op}${query}`, { method, headers });
  const op = async (method: string, slug: string, name: string) => {
    const res = await call(method, slug, name);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it("requires the admin token and answers 404 for an unknown slug", async () => {
    for (const [method, name] of [
      ["POST", "pull"],
      ["POST", "restart"],
      ["GET", "status"],
    ] as const) {
      expect((await call(method, c.slug, name, {})).status).toBe(401);
      expect(
        (await call(method, c.slug, name, { "x-admin-token": "wrong-wrong-wrong-wrong" })).status,
      ).toBe(401);
      expect(
        (await call(method, c.slug, name, { authorization: `Bearer ${c.token}` })).status,
      ).toBe(401);
      const missing = await call(method, "no-such-challenge", name);
      expect(missing.status).toBe(404);
      expect(await missing.json()).toMatchObject({ code: "challenge_not_found" });
    }
    expect(
      await docker
        .getContainer(challengeContainerName(c.slug))
        .inspect()
        .catch(() => null),
    ).toBeNull();
  });

  it("reports a challenge that was never started as missing", async () => {
    expect(await op("GET", c.slug, "status")).toEqual({
      status: 200,
      body: {
        slug: c.slug,
        operation: "status",
        status: "missing",
        detail: `No container ${challengeContainerName(c.slug)}`,
      },
    });
  });

  it("pull: an image only the engine has is reported as local; one nowhere is a 502 failure", async () => {
    const local = await op("POST", c.slug, "pull");
    expect(local.status).toBe(200);
    expect(local.body).toMatchObject({ slug: c.slug, operation: "pull", status: "local" });
    expect(local.body.detail).toMatch(/could not be pulled/);
    const nowhere = await challenge(`rt-none-${backend}-${run}`, {
      image: "ghcr.io/platform-test-nowhere/none:1",
    });
    const failed = await op("POST", nowhere.slug, "pull");
    expect(failed.status).toBe(502);
    expect(failed.body).toMatchObject({
      code: "runtime_failed",
      slug: nowhere.slug,
      operation: "pull",
      status: "failed",
    });
    const restart = await op("POST", nowhere.slug, "restart");
    expect(restart.status).toBe(502);
    expect(restart.body).toMatchObject({
      code: "runtime_failed",
      operation: "restart",
      status: "failed",
    });
    expect(restart.body.detail).toMatch(/could not be pulled and is not on the engine/);
  });

  it("pull streams server-sent events with Accept: text/event-stream or ?stream=1, ending in a result", async () => {
    for (const [headers, query] of [
      [{ ...t.admin, accept: "text/event-stream" }, ""],
      [t.admin, "?stream=1"],
    ] as const) {
      const res = await call("POST", c.slug, "pull", headers, query);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
      const text = await res.text();
      const result = /event: result\ndata: (.*)\n/.exec(text)?.[1];
      expect(JSON.parse(result!)).toMatchObject({
        slug: c.slug,
        operation: "pull",
        status: "local",
      });
    }
  });

  it("restart creates the container from the registry record, with its tokens, on the platform network, and records its address", async () => {
    const res = await op("POST", c.slug, "restart");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ slug: c.slug, operation: "restart", status: "running" });
    const row = await t.master.store.get(c.slug);
    expect(row.internal_base_url).toMatch(/^http:\/\/\d+\.\d+\.\d+\.\d+:8080$/);
    expect(res.body.detail).toContain(row.internal_base_url);

    const info = await docker.getContainer(challengeContainerName(c.slug)).inspect();
    const envs = Object.fromEntries(
      info.Config.Env.map((entry) => [
        entry.slice(0, entry.indexOf("=")),
        entry.slice(entry.indexOf("=") + 1),
      ]),
    );
    expect(hashToken(envs.CHALLENGE_TOKEN!)).toBe(row.challenge_token_hash);
    expect(envs.CHALLENGE_TOKEN).toBe(c.challengeToken);
    expect(envs.BROKER_TOKEN).toBe(c.token);
    expect(envs).toMatchObject({
      PLATFORM_CHALLENGE_SLUG: c.slug,
      PLATFORM_MASTER_URL: "http://master.test:8080",
      MODE: "test",
      API_KEY: "s3cret-value-never-shown",
      PORT: "8080",
    });
    expect(info.Config.Labels).toMatchObject({
      "platform.runtime": "challenge",
      "platform.challenge": c.slug,
      "platform.master": masterId,
    });
    expect(info.Config.Labels["platform.managed"]).toBeUndefined();
    expect(Object.keys(info.NetworkSettings.Networks)).toEqual([network]);
    expect(info.HostConfig).toMatchObject({
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges:true"],
      Init: true,
      RestartPolicy: { Name: "unless-stopped" },
    });

    // The master reaches the service at the recorded address.
    await eventually(
      async () => (await fetch(`${row.internal_base_url}/health`).catch(() => null))?.ok === true,
      10_000,
      "the challenge to serve",
    );
    const status = await op("GET", c.slug, "status");
    expect(status.body).toMatchObject({ status: "running" });
    expect(status.body.detail).toMatch(/^health: ok \(GET \/health 200\)/);
    for (const answer of [res, status]) {
      const text = JSON.stringify(answer.body);
      for (const secret of [c.token, c.challengeToken, "s3cret-value-never-shown"])
        expect(text).not.toContain(secret);
    }
  });

  it("restart replaces a running container, and status follows it to exited", async () => {
    const before = await docker.getContainer(challengeContainerName(c.slug)).inspect();
    expect((await op("POST", c.slug, "restart")).status).toBe(200);
    const after = await docker.getContainer(challengeContainerName(c.slug)).inspect();
    expect(after.Id).not.toBe(before.Id);
    await docker.getContainer(after.Id).stop({ t: 1 });
    const status = await op("GET", c.slug, "status");
    expect(status.body).toMatchObject({ status: "exited" });
    expect(status.body.detail).toMatch(/^Exited with code \d+/);
  });

  it("reports Docker's health when the image has a HEALTHCHECK", async () => {
    const h = await challenge(`rt-hc-${backend}-${run}`, { image: IMAGES.challengeHealthcheck });
    expect((await op("POST", h.slug, "restart")).status).toBe(200);
    await eventually(
      async () =>
        String((await op("GET", h.slug, "status")).body.detail).startsWith(
          "health: healthy (docker healthcheck)",
        ),
      15_000,
      "healthy",
    );
  });

  it("refuses to replace a container of that name it does not own (409)", async () => {
    const foreign = await challenge(`rt-foreign-${backend}-${run}`);
    const squatter = await docker.createContainer({
      name: challengeContainerName(foreign.slug),
      Image: IMAGES.busybox,
      Cmd: ["true"],
    });
    const res = await op("POST", foreign.slug, "restart");
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: "container_conflict", status: "failed" });
    expect((await squatter.inspect()).Id).toBeDefined();
  });
});
