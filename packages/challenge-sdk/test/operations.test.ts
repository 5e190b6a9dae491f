// What every SDK challenge serves its operator: /livez, /readyz (the database and the author's
// own checks) and the Prometheus metrics at /internal/v1/metrics, with labels that stay bounded
// whatever paths clients send.
import { defineChallenge, json, Type } from "@platform/challenge-sdk";
import { createJobQueue, processNext } from "@platform/challenge-sdk/jobs";
import { startTestChallenge, type TestChallenge } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { METRICS_PATH } from "../src/service-paths.js";

let upstreamUp = true;

const challenge = defineChallenge({
  slug: "ops",
  version: "2.3.4",
  weights: () => ({}),
  setup: ({ addReadinessCheck }) => {
    addReadinessCheck("upstream", () => {
      if (!upstreamUp) throw new Error("the upstream is away");
    });
  },
  routes: (router) =>
    router
      .public({
        method: "GET",
        path: "/v1/items/:id",
        params: Type.Object({ id: Type.String() }),
        handler: ({ params }) => ({ id: params.id }),
      })
      .submission({
        path: "/v1/submissions",
        body: Type.Object({ answer: Type.Integer() }),
        handler: () => json({ stored: true }, { status: 201 }),
      }),
});

describe("operations of an SDK challenge", () => {
  let t: TestChallenge;
  const scrape = async () => {
    const init = { headers: { authorization: `Bearer ${t.token}` } };
    // A pooled connection idle past the server's keep-alive may be reset as it is reused.
    const response = await t.fetch(METRICS_PATH, init).catch(() => t.fetch(METRICS_PATH, init));
    expect(response.status).toBe(200);
    return response.text();
  };
  const series = (text: string, name: string) =>
    text.split("\n").filter((line) => line.startsWith(`${name}{`));

  beforeAll(async () => {
    t = await startTestChallenge(challenge);
  });
  afterAll(() => t.close());

  it("answers /livez always and /readyz by its checks, naming the failing one", async () => {
    expect(await (await t.fetch("/livez")).json()).toEqual({ status: "ok" });
    const ready = await t.fetch("/readyz");
    expect(ready.status).toBe(200);
    expect((await ready.json()).checks).toMatchObject({
      database: { status: "ok" },
      upstream: { status: "ok" },
    });
    upstreamUp = false;
    try {
      // A change of state is seen once the last report (1 s) is stale.
      let response = await t.fetch("/readyz");
      for (let i = 0; i < 40 && response.status === 200; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        response = await t.fetch("/readyz");
      }
      expect(response.status).toBe(503);
      const body = await response.json();
      expect(body).toMatchObject({ status: "unavailable", failing: ["upstream"] });
      // The reason stays in the log, never in an answer anybody may read.
      expect(JSON.stringify(body)).not.toContain("away");
      expect((await t.fetch("/readyz?exclude=upstream")).status).toBe(200);
      expect(await scrape()).toMatch(/^challenge_ready 0$/m);
    } finally {
      upstreamUp = true;
    }
  });

  it("serves its metrics with the challenge token alone, never without it", async () => {
    expect((await t.fetch(METRICS_PATH)).status).toBe(401);
    expect(
      (await t.fetch(METRICS_PATH, { headers: { authorization: "Bearer not-the-token" } })).status,
    ).toBe(401);
    const text = await scrape();
    expect(text).toContain('challenge_info{slug="ops",version="2.3.4",sdk_version=');
    expect(text).toContain("# TYPE process_resident_memory_bytes gauge");
    expect(text).toContain('challenge_http_requests_total{route="/livez",code="200"}');
    expect(text).not.toContain(t.token);
  });

  it("counts submissions by outcome, either way in", async () => {
    const body = { method: "POST", json: { answer: 1 } };
    const first = await t.signedFetch("/v1/submissions", { ...body, nonce: "nonce-ops-000000001" });
    expect(first.status).toBe(201);
    const replay = await t.signedFetch("/v1/submissions", {
      ...body,
      nonce: "nonce-ops-000000001",
    });
    expect(replay.status).toBe(409);
    const bridged = await t.fetch("/internal/v1/bridge/submissions", {
      method: "POST",
      headers: { ...t.bridgeHeaders(t.miner.address), "content-type": "application/json" },
      body: JSON.stringify({ answer: 2 }),
    });
    expect(bridged.status).toBe(201);
    const text = await scrape();
    expect(text).toContain('challenge_submissions_total{outcome="accepted"} 2');
    expect(text).toContain('challenge_submissions_total{outcome="duplicate"} 1');
  });

  it("reports its job queue by state and each job's duration by queue and outcome", async () => {
    const queue = createJobQueue<{ n: number }>(t.runtime.sql, { queue: "ops-score" });
    await queue.enqueue({ n: 1 });
    await queue.enqueue({ n: 2 });
    let text = await scrape();
    expect(text).toContain('challenge_jobs{queue="ops-score",state="pending"} 2');
    expect(await processNext(queue, async () => "done")).not.toBeNull();
    text = await scrape();
    expect(text).toContain('challenge_jobs{queue="ops-score",state="pending"} 1');
    expect(text).toContain('challenge_jobs{queue="ops-score",state="completed"} 1');
    expect(text).toMatch(
      /^challenge_job_duration_seconds_count\{kind="ops-score",outcome="completed"\} [1-9]/m,
    );
  });

  it("keeps labels bounded: 10,000 distinct paths are a handful of route labels", async () => {
    const before = await scrape();
    for (let i = 0; i < 10_000; i++) {
      const path = i % 2 === 0 ? `/v1/items/item-${i}?page=${i}` : `/nowhere/${i}/${Math.random()}`;
      // In-process: the same app, the same observer, 10,000 requests in a few seconds.
      const response = await t.runtime.fetch(new Request(`http://challenge.test${path}`));
      await response.arrayBuffer();
    }
    const after = await scrape();
    const routes = series(after, "challenge_http_requests_total");
    expect(
      routes.length - series(before, "challenge_http_requests_total").length,
    ).toBeLessThanOrEqual(2);
    expect(after).toContain('challenge_http_requests_total{route="/v1/items/:id",code="200"} 5000');
    expect(after).toContain('challenge_http_requests_total{route="_unmatched",code="404"} 5000');
    expect(after).not.toMatch(/item-\d|nowhere|page=/);
  });
});
