// The master's operations surface: /livez and /readyz on both listeners, /metrics on the admin
// listener only (admin token or the scrape token), the metric names with their labels, and
// labels that stay bounded whatever paths, slugs and spellings clients send.
import {
  generateMnemonic,
  hashToken,
  initCrypto,
  keypairFromMnemonic,
  metricSeriesCount,
  type RunningServer,
  signRequest,
} from "@platform/core";
import { Pool } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type EchoUpstream,
  rawRequest,
  startEchoUpstream,
} from "../../test/proxy/echo-upstream.js";
import { registerChallenge } from "../../test/proxy/register-challenge.js";
import { startTestMaster, type TestMaster } from "../../test/test-master.js";
import { BRIDGE_PATH } from "../proxy/signed-upload-route.js";

const METRICS_TOKEN = "scrape-only-token-0123456789abcdef";

describe("operations endpoints", () => {
  let t: TestMaster;
  let up: EchoUpstream;
  let server: RunningServer & { admin: RunningServer };

  beforeAll(async () => {
    await initCrypto();
    up = await startEchoUpstream();
    up.on(BRIDGE_PATH, (req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(201, { "content-type": "application/json" });
        res.end("{}");
      });
    });
    t = await startTestMaster("pglite", (config) => {
      config.metricsTokenHash = hashToken(METRICS_TOKEN);
    });
    await registerChallenge(t, "live", "active", up.url);
  });
  afterAll(async () => {
    await t.close();
    await up.close();
  });

  // The Docker engine is the machine's: these checks leave it out (tested below on its own).
  const ready = (
    fetcher: (path: string, init?: RequestInit) => Promise<Response>,
    init?: RequestInit,
  ) => fetcher("/readyz?exclude=docker", init);

  it("is not ready before its first registry load, and says which check fails", async () => {
    for (const fetcher of [t.publicFetch, t.adminFetch]) {
      expect((await fetcher("/livez")).status).toBe(200);
      const response = await ready(fetcher);
      expect(response.status).toBe(503);
      const body = await response.json();
      expect(body).toMatchObject({ status: "unavailable", failing: ["registry"] });
      expect(body.checks.database.status).toBe("ok");
    }
    server = await t.listen();
    for (const fetcher of [t.publicFetch, t.adminFetch]) {
      const response = await ready(fetcher);
      expect(response.status, await response.clone().text()).toBe(200);
      expect(await response.json()).toMatchObject({ status: "ok", failing: [] });
    }
    // Over the sockets too, and without the exclusion the docker check is listed.
    const live = await fetch(`${server.url}/livez`);
    expect([live.status, await live.json()]).toEqual([200, { status: "ok" }]);
    const full = await (await fetch(`${server.admin.url}/readyz`)).json();
    expect(Object.keys(full.checks).sort()).toEqual(["database", "docker", "registry"]);
  });

  it("serves /metrics on the admin listener only, to the admin token or the scrape token", async () => {
    // Never on the public listener: in-process, over its socket, in any spelling.
    for (const path of ["/metrics", "/METRICS", "/metrics/", "/%6detrics"]) {
      expect((await t.publicFetch(path, { headers: t.admin })).status).toBe(404);
      const res = await rawRequest(server.url, {
        path,
        headers: { authorization: `Bearer ${t.adminToken}` },
      });
      expect([path, res.status]).toEqual([path, 404]);
    }
    const scrape = (headers: Record<string, string>) =>
      fetch(`${server.admin.url}/metrics`, { headers });
    expect((await scrape({})).status).toBe(401);
    expect((await scrape({ authorization: "Bearer wrong-token-0123456789" })).status).toBe(401);
    for (const headers of [
      { authorization: `Bearer ${t.adminToken}` },
      t.admin,
      { authorization: `Bearer ${METRICS_TOKEN}` },
    ]) {
      const res = await scrape(headers);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    }
    // The scrape token opens nothing else on the admin listener.
    const admin = await fetch(`${server.admin.url}/v1/admin/challenges`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(admin.status).toBe(401);
  });

  it("counts proxied requests and signed uploads by registered slug, status and outcome", async () => {
    await rawRequest(server.url, { path: "/challenges/live/v1/items" });
    await rawRequest(server.url, { path: "/challenges/live/health" }); // blocked: 403
    await rawRequest(server.url, { path: "/challenges/ghost/v1/items" }); // unknown: 404
    const miner = keypairFromMnemonic(generateMnemonic());
    const path = "/v1/challenges/live/submissions";
    const upload = (headers: Record<string, string>) =>
      rawRequest(server.url, {
        method: "POST",
        path,
        headers: { "content-type": "application/zip", "content-length": "3", ...headers },
        body: "zip",
      });
    const signed = signRequest(miner, { method: "POST", url: path, body: "zip", slug: "live" });
    expect((await upload(signed as unknown as Record<string, string>)).status).toBe(201);
    expect((await upload(signed as unknown as Record<string, string>)).status).toBe(409);
    const text = await (await fetch(`${server.admin.url}/metrics`, { headers: t.admin })).text();
    expect(text).toContain('platform_proxy_requests_total{slug="live",code="200"} 1');
    expect(text).toContain('platform_proxy_requests_total{slug="live",code="403"} 1');
    expect(text).toContain('platform_proxy_requests_total{slug="_unknown",code="404"} 1');
    expect(text).toContain('platform_proxy_requests_total{slug="live",code="201"} 1');
    expect(text).toContain('platform_signed_uploads_total{slug="live",outcome="accepted"} 1');
    expect(text).toContain('platform_signed_uploads_total{slug="live",outcome="nonce_reused"} 1');
    expect(text).toMatch(/platform_proxy_request_duration_seconds_count\{slug="live"\} 4/);
    for (const name of [
      "platform_weights_collections_total",
      "platform_weights_last_snapshot_timestamp_seconds",
      "platform_broker_runs_total",
      "platform_broker_running",
      "platform_ready",
      "platform_registry_challenges",
      "process_resident_memory_bytes",
    ]) {
      expect(text).toContain(`# TYPE ${name} `);
    }
    expect(text).toContain('platform_registry_challenges{status="active"} 1');
    // No credential of any kind ever appears in the scrape.
    expect(text).not.toContain(t.adminToken);
    expect(text).not.toContain(METRICS_TOKEN);
  });

  it("counts weights collections by challenge and status, and exports the snapshot time", async () => {
    up.on("/internal/v1/get_weights", (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ challenge_slug: "live", epoch: null, weights: {} }));
    });
    const collected = await t.adminFetch("/v1/admin/weights/collect", {
      method: "POST",
      headers: t.admin,
    });
    expect(collected.status).toBe(200);
    const snapshot = (await collected.json()) as { computed_at: string };
    const text = await (await t.adminFetch("/metrics", { headers: t.admin })).text();
    expect(text).toContain('platform_weights_collections_total{slug="live",status="ok"} 1');
    const at = Number(/^platform_weights_last_snapshot_timestamp_seconds (\S+)$/m.exec(text)?.[1]);
    expect(Math.abs(at - Date.parse(snapshot.computed_at) / 1000)).toBeLessThan(1);
  });

  it("keeps every label bounded: 10,000 distinct paths, slugs and spellings add a handful of series", async () => {
    const registry = t.master.context.metrics.registry;
    const before = await metricSeriesCount(registry);
    const paths: string[] = [];
    for (let i = 0; i < 10_000; i++) {
      switch (i % 5) {
        case 0:
          paths.push(`/challenges/live/v1/items/${i}?q=${i}`); // a known slug, any path
          break;
        case 1:
          paths.push(`/challenges/ghost-${i}/x`); // an unknown slug each time
          break;
        case 2:
          paths.push(`/challenges/live/health/${i}`); // blocked, in many paths
          break;
        case 3:
          paths.push(`/challenges/live/%2e%2e/%2e%2e/x${i}`); // dot segments out of the prefix
          break;
        default:
          paths.push(`/nowhere/${i}`); // no route at all
      }
    }
    // Keep-alive connections (undici sends each target as written): 10,000 requests in seconds.
    const pool = new Pool(server.url, { connections: 16 });
    let next = 0;
    const lane = async () => {
      while (next < paths.length) {
        const path = paths[next++]!;
        const res = await pool.request({ method: "GET", path });
        await res.body.dump();
      }
    };
    try {
      await Promise.all(Array.from({ length: 16 }, lane));
    } finally {
      await pool.close();
    }
    const after = await metricSeriesCount(registry);
    // live/200, live/403, _unknown/404, their duration histograms: a few series, not thousands.
    expect(after - before).toBeLessThanOrEqual(6);
    const text = await registry.metrics();
    expect(text).not.toMatch(/ghost-|items\/|nowhere|x\d/);
  }, 120_000);
});

describe("/metrics with no scrape token configured", () => {
  let t: TestMaster;
  let adminUrl = "";

  beforeAll(async () => {
    t = await startTestMaster("pglite");
    expect(t.master.context.config.metricsTokenHash).toBeUndefined();
    adminUrl = (await t.listen()).admin.url;
  });
  afterAll(() => t.close());

  it("answers 401 to any bearer but the admin token", async () => {
    const scrape = (headers: Record<string, string>) => fetch(`${adminUrl}/metrics`, { headers });
    // Without a scrape token there is nothing for a stranger's bearer to match.
    const refused: Record<string, string>[] = [
      {},
      { authorization: "Bearer wrong-token-0123456789" },
      { authorization: `Bearer ${METRICS_TOKEN}` },
      { authorization: `Bearer ${t.adminToken}x` },
      { authorization: "Bearer x" },
    ];
    for (const headers of refused) {
      const res = await scrape(headers);
      expect([headers, res.status]).toEqual([headers, 401]);
      expect(await res.json()).toMatchObject({ code: "metrics_unauthorized" });
    }
    expect((await scrape({ authorization: `Bearer ${t.adminToken}` })).status).toBe(200);
  });
});

describe("the docker readiness check", () => {
  let t: TestMaster;
  const saved = process.env["DOCKER_HOST"];

  beforeAll(async () => {
    // An engine that is not there: the broker's client reads DOCKER_HOST when the master starts.
    process.env["DOCKER_HOST"] = "unix:///nonexistent/platform-test-docker.sock";
    t = await startTestMaster("pglite");
    if (saved === undefined) delete process.env["DOCKER_HOST"];
    else process.env["DOCKER_HOST"] = saved;
    await t.listen();
  });
  afterAll(() => t.close());

  it("answers 503 naming docker; only the admin token reads the reason", async () => {
    const anonymous = await t.adminFetch("/readyz");
    expect(anonymous.status).toBe(503);
    const body = await anonymous.json();
    expect(body.failing).toEqual(["docker"]);
    expect(body.checks.docker).not.toHaveProperty("error");
    const publicBody = await (await t.publicFetch("/readyz")).json();
    expect(publicBody.checks.docker).not.toHaveProperty("error");
    const detailed = await (await t.adminFetch("/readyz", { headers: t.admin })).json();
    expect(detailed.checks.docker.error).toEqual(expect.any(String));
    // Excluding it (as Kubernetes' /readyz?exclude= does) leaves the master ready.
    expect((await t.publicFetch("/readyz?exclude=docker")).status).toBe(200);
  });
});
