import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { WeightsSnapshot } from "@platform/core";
import { testBackends } from "@platform/core/testing";
import { FormatRegistry } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonInit, startTestMaster, type TestMaster } from "../../test/test-master.js";
import {
  type FakeChallenge,
  type FakeReply,
  startFakeChallenge,
} from "../../test/weights/fake-challenge.js";

const fixture = (name: string) =>
  fileURLToPath(new URL(`../../test/weights/${name}`, import.meta.url));
const packageRoot = fileURLToPath(new URL("../../", import.meta.url));

// Core's schemas use format "date-time" without registering it; TypeBox rejects unknown formats.
if (!FormatRegistry.Has("date-time")) {
  FormatRegistry.Set(
    "date-time",
    (value) =>
      /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value) &&
      !Number.isNaN(Date.parse(value)),
  );
}

const challenge = (slug: string, extra: Record<string, unknown> = {}) => ({
  slug,
  name: `Challenge ${slug}`,
  image: "ghcr.io/org/challenge:1.2.0",
  version: "1.2.0",
  ...extra,
});

describe.each(await testBackends())("weights routes on %s", (backend) => {
  let t: TestMaster;
  const fakes = new Map<string, FakeChallenge>();
  const tokens = new Map<string, string>();

  /** Register a challenge served by a fresh fake that accepts only the token the master issued. */
  async function register(
    slug: string,
    fields: Record<string, unknown>,
    reply?: (call: number) => FakeReply,
  ) {
    const fake = await startFakeChallenge({ slug, ...(reply ? { reply } : {}) });
    fakes.set(slug, fake);
    const res = await t.fetch(
      "/v1/admin/challenges",
      jsonInit("POST", challenge(slug, { internal_base_url: fake.url, ...fields }), t.admin),
    );
    expect(res.status).toBe(201);
    const body = await res.json();
    fake.token = body.challenge_token;
    tokens.set(slug, body.challenge_token);
    return fake;
  }
  const collect = (headers: Record<string, string> = t.admin) =>
    t.fetch("/v1/admin/weights/collect", { method: "POST", headers });
  const latest = () => t.fetch("/v1/weights/latest");
  const snapshotCount = async () =>
    Number((await t.master.database.sql`select count(*)::int as n from weight_snapshots`)[0]!.n);

  beforeAll(async () => {
    t = await startTestMaster(backend, (config) => {
      config.weights.metagraph = fixture("metagraph-hotkeys.json");
      config.weights.timeoutMs = 1_000;
      config.weights.retries = 0;
      config.weights.keepSnapshots = 4;
    });
  });
  afterAll(async () => {
    await t.close();
    await Promise.all([...fakes.values()].map((fake) => fake.close()));
  });

  it("answers 404 no_weights_yet before the first snapshot", async () => {
    const res = await latest();
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      detail: "No weights snapshot has been computed yet",
      code: "no_weights_yet",
    });
  });

  it("refuses the admin routes without the admin token, and collects nothing", async () => {
    const attempts: Record<string, string>[] = [
      {},
      { "x-admin-token": "wrong-wrong-wrong-wrong" },
      { authorization: "Bearer wrong-wrong-wrong" },
    ];
    for (const headers of attempts) {
      const res = await collect(headers);
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: "admin_unauthorized" });
      expect((await t.fetch("/v1/admin/weights/history", { headers })).status).toBe(401);
    }
    expect(await snapshotCount()).toBe(0);
  });

  it("collects from active challenges with each one's own token and slug, persists and serves the snapshot", async () => {
    const alpha = await register("alpha", { emission_percent: 60, status: "active" }, () => ({
      json: {
        challenge_slug: "alpha",
        epoch: 9,
        weights: { "5Alice": 1, "5Bob": 3, "5Stranger": 5 },
      },
    }));
    const beta = await register("beta", { emission_percent: 40, status: "active" }, () => ({
      status: 500,
      json: {},
    }));
    const drafted = await register("drafted", { emission_percent: 50 });
    const stopped = await register("stopped", { emission_percent: 50, status: "inactive" });

    const res = await collect();
    expect(res.status).toBe(200);
    const snapshot = await res.json();
    expect(snapshot.uids).toEqual([0, 1, 2]); // beta failed: its 40% burns to uid 0
    expect(snapshot.weights[0]).toBeCloseTo(0.4, 12);
    expect(snapshot.weights[1]).toBeCloseTo(0.15, 12);
    expect(snapshot.weights[2]).toBeCloseTo(0.45, 12);
    expect(snapshot.weights_u16.reduce((a: number, b: number) => a + b, 0)).toBe(65_535);
    expect(snapshot.burned).toBe(false);
    expect(snapshot.hotkeys).toEqual({ "5Alice": 0.15, "5Bob": expect.closeTo(0.45, 12) });
    expect(snapshot.sources).toEqual([
      {
        slug: "alpha",
        emission_percent: 60,
        status: "ok",
        epoch: 9,
        hotkeys: 2,
        share: 0.6,
        error: null,
      },
      {
        slug: "beta",
        emission_percent: 40,
        status: "failed",
        epoch: null,
        hotkeys: 0,
        share: 0,
        error: "HTTP 500",
      },
    ]);
    expect(snapshot.failure_policy).toBe("burn");
    expect(snapshot.collection.metagraph).toEqual({ status: "ok", hotkeys: 5, error: null });
    expect(snapshot.collection.challenges[0]).toMatchObject({
      slug: "alpha",
      status: "ok",
      attempts: 1,
      dropped_unknown: 1,
    });

    // The fakes answer 401 to any other bearer or slug: alpha being ok proves the master sent its own.
    expect(alpha.served).toBe(1);
    expect(alpha.requests[0]!.headers.authorization).toBe(`Bearer ${tokens.get("alpha")}`);
    expect(alpha.requests[0]!.headers["x-platform-challenge-slug"]).toBe("alpha");
    expect(beta.requests[0]!.headers.authorization).toBe(`Bearer ${tokens.get("beta")}`);
    expect(drafted.requests).toHaveLength(0);
    expect(stopped.requests).toHaveLength(0);

    const served = await latest();
    expect(served.status).toBe(200);
    const body = await served.json();
    expect(Value.Check(WeightsSnapshot, body)).toBe(true);
    expect(Object.keys(body).sort()).toEqual([
      "burned",
      "computed_at",
      "hotkeys",
      "id",
      "sources",
      "uids",
      "weights",
      "weights_u16",
    ]);
    expect(body).toEqual({
      id: snapshot.id,
      computed_at: snapshot.computed_at,
      uids: snapshot.uids,
      weights: snapshot.weights,
      weights_u16: snapshot.weights_u16,
      hotkeys: snapshot.hotkeys,
      burned: false,
      sources: snapshot.sources,
    });
    const [row] = await t.master.database
      .sql`select * from weight_snapshots where id = ${snapshot.id}`;
    expect(row!.uids).toEqual([0, 1, 2]);
    expect(row!.failure_policy).toBe("burn");

    const everything = JSON.stringify(snapshot) + JSON.stringify(body);
    for (const token of tokens.values()) expect(everything).not.toContain(token);
    expect(everything).not.toContain(alpha.url);
  });

  it("records a challenge that rejects the master's credentials as failed with HTTP 401", async () => {
    fakes.get("alpha")!.token = "ct_someone_else_entirely_0000";
    const snapshot = await (await collect()).json();
    fakes.get("alpha")!.token = tokens.get("alpha")!;
    expect(snapshot.sources.find((s: { slug: string }) => s.slug === "alpha")).toMatchObject({
      status: "failed",
      error: "HTTP 401",
    });
    expect(snapshot).toMatchObject({ uids: [0], weights: [1], burned: true });
  });

  it("fails a challenge whose reply carries strings or nulls as weights, and still writes the snapshot", async () => {
    const alpha = fakes.get("alpha")!;
    const original = alpha.reply;
    for (const bad of ["NaN", null, "Infinity", "1e999"]) {
      alpha.reply = () => ({
        json: { challenge_slug: "alpha", weights: { "5Alice": 1, "5Bob": bad } },
      });
      const before = await snapshotCount();
      const res = await collect();
      expect(res.status).toBe(200);
      const snapshot = await res.json();
      expect(snapshot.sources[0]).toMatchObject({
        slug: "alpha",
        status: "failed",
        error: expect.stringMatching(/^invalid reply at weights\.5Bob/),
      });
      expect(await snapshotCount()).toBe(Math.min(before + 1, 4));
    }
    // A literal 1e999 is valid JSON that parses to Infinity, which the schema's number refuses.
    alpha.reply = () => ({
      body: '{"challenge_slug":"alpha","weights":{"5Alice":1,"5Bob":1e999}}',
    });
    const infinite = await (await collect()).json();
    expect(infinite.sources[0]).toMatchObject({
      status: "failed",
      error: expect.stringMatching(/^invalid reply at weights\.5Bob/),
    });
    // Zero and negative values are numbers: the reply is valid, and cleaning drops them.
    alpha.reply = () => ({
      body: '{"challenge_slug":"alpha","weights":{"5Alice":1,"5Bob":0,"5Carol":-2}}',
    });
    const snapshot = await (await collect()).json();
    expect(snapshot.sources[0]).toMatchObject({ status: "ok", hotkeys: 1 });
    expect(snapshot.collection.challenges[0]).toMatchObject({ dropped_invalid: 2 });
    expect(snapshot.hotkeys).toEqual({ "5Alice": 0.6 });
    alpha.reply = original;
  });

  it("keeps only the configured number of snapshots and serves the history newest first", async () => {
    for (let i = 0; i < 3; i++) expect((await collect()).status).toBe(200);
    expect(await snapshotCount()).toBe(4);
    const res = await t.fetch("/v1/admin/weights/history?limit=3", { headers: t.admin });
    expect(res.status).toBe(200);
    const { snapshots } = await res.json();
    expect(snapshots).toHaveLength(3);
    const ids = snapshots.map((s: { id: number }) => s.id);
    expect(ids).toEqual([...ids].sort((a: number, b: number) => b - a));
    expect(snapshots[0].id).toBe((await (await latest()).json()).id);
    expect(snapshots[0].collection.challenges.map((c: { slug: string }) => c.slug)).toEqual([
      "alpha",
      "beta",
    ]);
    const all = await (await t.fetch("/v1/admin/weights/history", { headers: t.admin })).json();
    expect(all.snapshots).toHaveLength(4);
  });

  it.each(["0", "101", "abc", "-1"])("answers 422 for history?limit=%s", async (limit) => {
    const res = await t.fetch(`/v1/admin/weights/history?limit=${limit}`, { headers: t.admin });
    expect(res.status).toBe(422);
    expect((await res.json()).detail[0].loc).toEqual(["query", "limit"]);
  });

  it("with no active challenge left, burns everything", async () => {
    for (const slug of ["alpha", "beta"]) {
      expect(
        (
          await t.fetch(`/v1/admin/challenges/${slug}/deactivate`, {
            method: "POST",
            headers: t.admin,
          })
        ).status,
      ).toBe(200);
    }
    const snapshot = await (await collect()).json();
    expect(snapshot).toMatchObject({
      uids: [0],
      weights: [1],
      weights_u16: [65_535],
      burned: true,
      sources: [],
      hotkeys: {},
    });
  });
});

describe.each(await testBackends())("scheduled weights collection on %s", (backend) => {
  it("starts when the master listens and stops when it closes", async () => {
    const fake = await startFakeChallenge({
      slug: "tick",
      reply: () => ({ json: { challenge_slug: "tick", weights: { "5Alice": 1 } } }),
    });
    const t = await startTestMaster(backend, (config) => {
      config.weights.intervalSeconds = 1;
      config.weights.metagraph = fixture("metagraph-map.json");
    });
    try {
      const res = await t.fetch(
        "/v1/admin/challenges",
        jsonInit(
          "POST",
          challenge("tick", {
            internal_base_url: fake.url,
            emission_percent: 10,
            status: "active",
          }),
          t.admin,
        ),
      );
      fake.token = (await res.json()).challenge_token;
      await new Promise((resolve) => setTimeout(resolve, 1_300));
      expect(fake.served).toBe(0); // not listening yet: nothing scheduled

      const server = await t.listen();
      const base = `http://127.0.0.1:${server.port}`;
      await expect
        .poll(async () => (await fetch(`${base}/v1/weights/latest`)).status, {
          timeout: 5_000,
          interval: 50,
        })
        .toBe(200);
      const first = await (await fetch(`${base}/v1/weights/latest`)).json();
      expect(first).toMatchObject({ uids: [1], weights: [1], burned: false });
      await expect
        .poll(() => fake.served, { timeout: 5_000, interval: 50 })
        .toBeGreaterThanOrEqual(2);
    } finally {
      await t.close();
    }
    const served = fake.served;
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(fake.served).toBe(served);
    await fake.close();
  });
});

describe("a closed master", () => {
  it("lets its process exit: no timer, socket or pool left behind", async () => {
    const fake = await startFakeChallenge({
      slug: "alpha",
      reply: () => ({ json: { challenge_slug: "alpha", weights: { "5Alice": 1 } } }),
    });
    try {
      const child = spawn(
        process.execPath,
        [
          "--conditions=@platform/source",
          "--import",
          "tsx",
          fixture("exit-after-close.ts"),
          fake.url,
        ],
        {
          cwd: packageRoot,
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      let stdout = "";
      let stderr = "";
      let closedAt = 0;
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk;
        const token = /token (\S+)/.exec(stdout)?.[1];
        if (token) fake.token = token;
        if (!closedAt && stdout.includes("closed")) closedAt = Date.now();
      });
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk;
      });
      const code = await new Promise<number | null>((resolve) => {
        const guard = setTimeout(() => {
          child.kill("SIGKILL");
          resolve(null);
        }, 40_000);
        child.on("exit", (exitCode) => {
          clearTimeout(guard);
          resolve(exitCode);
        });
      });
      expect({ code, stderr: stderr.slice(-2_000) }).toEqual({
        code: 0,
        stderr: expect.any(String),
      });
      expect(stdout).toContain("closed");
      expect(Date.now() - closedAt).toBeLessThan(5_000);
      expect(fake.served).toBeGreaterThanOrEqual(1);
    } finally {
      await fake.close();
    }
  }, 60_000);
});
