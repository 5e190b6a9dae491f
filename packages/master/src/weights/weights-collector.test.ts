import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createLogger, type HttpError } from "@platform/core";
import { afterEach, describe, expect, it } from "vitest";
import {
  type FakeChallenge,
  type FakeReply,
  startFakeChallenge,
} from "../../test/weights/fake-challenge.js";
import type { ChallengeRow } from "../registry/challenge-row.js";
import type { AggregatedWeights } from "./aggregate-weights.js";
import { type MetagraphProvider, staticMetagraph } from "./metagraph-provider.js";
import { WeightsCollector, type WeightsCollectorSettings } from "./weights-collector.js";
import type { CollectionReport, StoredWeightsSnapshot } from "./weights-snapshot-store.js";

const TOKEN = "ct_collector_token_0123456789abcdef";
const fakes: FakeChallenge[] = [];
const collectors: WeightsCollector[] = [];
afterEach(async () => {
  await Promise.all(collectors.splice(0).map((c) => c.stop()));
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

async function fake(slug: string, reply?: (call: number) => FakeReply) {
  const started = await startFakeChallenge({ slug, token: TOKEN, ...(reply ? { reply } : {}) });
  fakes.push(started);
  return started;
}

const row = (slug: string, internal_base_url: string | null, emission_percent = 50) =>
  ({ slug, internal_base_url, emission_percent, status: "active" }) as ChallengeRow;

/** An in-memory snapshot store that records what the collector saved. */
function memoryStore(age: () => number | null = () => null) {
  const saved: { aggregate: AggregatedWeights; collection: CollectionReport }[] = [];
  return {
    saved,
    async save(
      aggregate: AggregatedWeights,
      meta: { failure_policy: "burn" | "redistribute"; collection: CollectionReport },
    ) {
      saved.push({ aggregate, collection: meta.collection });
      return {
        id: saved.length,
        computed_at: new Date().toISOString(),
        ...aggregate,
        ...meta,
      } as StoredWeightsSnapshot;
    },
    async latestAgeSeconds() {
      return age();
    },
  };
}

function collector(
  rows: ChallengeRow[],
  options: {
    settings?: Partial<WeightsCollectorSettings>;
    metagraph?: MetagraphProvider | null;
    store?: ReturnType<typeof memoryStore>;
    lines?: string[];
  } = {},
) {
  const store = options.store ?? memoryStore();
  const c = new WeightsCollector({
    challenges: { list: async () => rows, challengeToken: () => TOKEN },
    snapshots: store,
    metagraph:
      options.metagraph === undefined
        ? staticMetagraph(["owner", "alice", "bob"])
        : options.metagraph,
    log: createLogger({ name: "test", level: "debug", write: (line) => options.lines?.push(line) }),
    settings: {
      intervalMs: 0,
      timeoutMs: 1_000,
      retries: 0,
      concurrency: 4,
      failurePolicy: "burn",
      backoffMs: 5,
      ...options.settings,
    },
  });
  collectors.push(c);
  return { collector: c, store };
}

describe("WeightsCollector", () => {
  it("polls every active challenge, aggregates and saves one snapshot with the run's detail", async () => {
    const a = await fake("a", () => ({
      json: { challenge_slug: "a", epoch: 3, weights: { alice: 1, stranger: 1, bad: -1 } },
    }));
    const b = await fake("b", () => ({ status: 500, json: {} }));
    const lines: string[] = [];
    const { collector: c, store } = collector([row("a", a.url), row("b", b.url), row("c", null)], {
      lines,
    });
    const snapshot = await c.collect();
    expect(store.saved).toHaveLength(1);
    expect(snapshot.uids).toEqual([0, 1]);
    expect(snapshot.weights[0]).toBeCloseTo(2 / 3, 12); // b and c failed: their 2/3 burns
    expect(snapshot.sources.map((s) => [s.slug, s.status, s.error])).toEqual([
      ["a", "ok", null],
      ["b", "failed", "HTTP 500"],
      ["c", "failed", "no internal_base_url configured"],
    ]);
    const { collection } = store.saved[0]!;
    expect(collection.metagraph).toEqual({ status: "ok", hotkeys: 3, error: null });
    expect(collection.challenges).toEqual([
      {
        slug: "a",
        status: "ok",
        latency_ms: expect.any(Number),
        attempts: 1,
        error: null,
        dropped_invalid: 1,
        dropped_unknown: 1,
      },
      {
        slug: "b",
        status: "failed",
        latency_ms: expect.any(Number),
        attempts: 1,
        error: "HTTP 500",
        dropped_invalid: 0,
        dropped_unknown: 0,
      },
      {
        slug: "c",
        status: "failed",
        latency_ms: null,
        attempts: 0,
        error: "no internal_base_url configured",
        dropped_invalid: 0,
        dropped_unknown: 0,
      },
    ]);
    expect(
      lines.some(
        (line) =>
          line.includes("challenge weights collection failed") && line.includes('"slug":"b"'),
      ),
    ).toBe(true);
    expect(lines.join("\n")).not.toContain(TOKEN);
  });

  it("never sends the bearer to a metadata address or a URL with userinfo (issue 10 item 10)", async () => {
    const a = await fake("a", () => ({
      json: { challenge_slug: "a", epoch: 1, weights: { alice: 1 } },
    }));
    const withUserinfo = a.url.replace("://", "://svc:pw@");
    const { collector: c } = collector([
      row("a", withUserinfo),
      row("meta", "http://169.254.169.254/latest/meta-data/"),
      row("mapped", "http://[::ffff:169.254.169.254]/"),
    ]);
    const snapshot = await c.collect();
    expect(a.requests).toHaveLength(0);
    expect(snapshot.sources.map((source) => source.status)).toEqual(["failed", "failed", "failed"]);
    const errors = snapshot.sources.map((source) => source.error ?? "");
    expect(errors.filter((error) => error.includes("credentials"))).toHaveLength(1);
    expect(errors.filter((error) => error.includes("link-local"))).toHaveLength(2);
  });

  it("never runs twice at once: concurrent calls share one run", async () => {
    const a = await fake("a", () => ({
      delayMs: 150,
      json: { challenge_slug: "a", weights: { alice: 1 } },
    }));
    const { collector: c, store } = collector([row("a", a.url)]);
    const [first, second] = await Promise.all([c.collect(), c.collect()]);
    expect(first).toBe(second);
    expect(store.saved).toHaveLength(1);
    expect(a.served).toBe(1);
    await c.collect();
    expect(a.served).toBe(2);
  });

  it("calls at most `concurrency` challenges at once", async () => {
    let inFlight = 0;
    let peak = 0;
    const server = createServer((req, res) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      const slug = req.url!.split("/")[1]!;
      setTimeout(() => {
        inFlight--;
        res.end(JSON.stringify({ challenge_slug: slug, weights: { alice: 1 } }));
      }, 60);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const rows = ["c1", "c2", "c3", "c4", "c5", "c6", "c7"].map((slug) =>
        row(slug, `${base}/${slug}`),
      );
      const { collector: c } = collector(rows, { settings: { concurrency: 3 } });
      const snapshot = await c.collect();
      expect(snapshot.sources.every((s) => s.status === "ok")).toBe(true);
      expect(peak).toBe(3);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  describe("the metagraph", () => {
    it("none configured: the uid vector burns, the hotkey view remains", async () => {
      const a = await fake("a", () => ({ json: { challenge_slug: "a", weights: { alice: 1 } } }));
      const { collector: c, store } = collector([row("a", a.url)], { metagraph: null });
      const snapshot = await c.collect();
      expect(snapshot).toMatchObject({
        uids: [0],
        weights: [1],
        burned: true,
        hotkeys: { alice: 1 },
      });
      expect(store.saved[0]!.collection.metagraph).toEqual({
        status: "none",
        hotkeys: 0,
        error: null,
      });
    });

    it("failing after a good read: the last good map is used and marked stale", async () => {
      const a = await fake("a", () => ({ json: { challenge_slug: "a", weights: { alice: 1 } } }));
      let calls = 0;
      const flaky: MetagraphProvider = {
        async uids() {
          calls++;
          if (calls > 1) throw new Error("chain node down at http://user:pw@node.internal");
          return new Map([["alice", 7]]);
        },
      };
      const lines: string[] = [];
      const { collector: c, store } = collector([row("a", a.url)], { metagraph: flaky, lines });
      expect((await c.collect()).uids).toEqual([7]);
      const second = await c.collect();
      expect(second.uids).toEqual([7]);
      expect(store.saved[1]!.collection.metagraph).toEqual({
        status: "stale",
        hotkeys: 1,
        error: "metagraph provider failed",
      });
      expect(lines.join("\n")).not.toContain("pw@");
    });

    it("failing from the start: everything burns, the error is recorded", async () => {
      const a = await fake("a", () => ({ json: { challenge_slug: "a", weights: { alice: 1 } } }));
      const broken: MetagraphProvider = { uids: () => Promise.reject(new Error("nope")) };
      const { collector: c, store } = collector([row("a", a.url)], { metagraph: broken });
      expect(await c.collect()).toMatchObject({ uids: [0], burned: true });
      expect(store.saved[0]!.collection.metagraph.status).toBe("failed");
    });
  });

  describe("the schedule", () => {
    it("does nothing with interval 0 (on demand only)", async () => {
      const a = await fake("a");
      const { collector: c } = collector([row("a", a.url)], { settings: { intervalMs: 0 } });
      c.start();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(a.served).toBe(0);
    });

    // That the process can exit after close() is checked end to end in weights-routes.test.ts.
    it("collects at once, then every interval, and stops for good", async () => {
      const a = await fake("a", () => ({ json: { challenge_slug: "a", weights: { alice: 1 } } }));
      const { collector: c, store } = collector([row("a", a.url)], {
        settings: { intervalMs: 80 },
      });
      c.start();
      c.start(); // idempotent
      await expect
        .poll(() => store.saved.length, { timeout: 2_000, interval: 10 })
        .toBeGreaterThanOrEqual(3);
      await c.stop();
      const count = store.saved.length;
      await new Promise((resolve) => setTimeout(resolve, 250));
      expect(store.saved.length).toBe(count);
      await expect(c.collect()).rejects.toMatchObject({ status: 503, code: "master_closing" });
    });

    it("skips a tick when a fresh snapshot exists (another replica, or an on-demand run)", async () => {
      const a = await fake("a");
      const { collector: c, store } = collector([row("a", a.url)], {
        settings: { intervalMs: 60_000 },
        store: memoryStore(() => 5),
      });
      c.start();
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(a.served).toBe(0);
      expect(store.saved).toHaveLength(0);
    });

    it("keeps going after a run fails (the database was down)", async () => {
      const a = await fake("a", () => ({ json: { challenge_slug: "a", weights: { alice: 1 } } }));
      const store = memoryStore();
      let failures = 0;
      const save = store.save.bind(store);
      store.save = async (...args) => {
        if (failures++ < 2) throw new Error("connection refused");
        return save(...args);
      };
      const lines: string[] = [];
      const { collector: c } = collector([row("a", a.url)], {
        settings: { intervalMs: 30 },
        store,
        lines,
      });
      c.start();
      await expect
        .poll(() => store.saved.length, { timeout: 2_000, interval: 10 })
        .toBeGreaterThanOrEqual(1);
      expect(
        lines.filter((line) => line.includes("scheduled weights collection failed")),
      ).toHaveLength(2);
    });

    it("stop() cancels a run in progress, which then saves nothing", async () => {
      const a = await fake("a", () => "hang");
      const { collector: c, store } = collector([row("a", a.url)], {
        settings: { timeoutMs: 30_000, retries: 3 },
      });
      const run = c.collect();
      await expect.poll(() => a.served, { timeout: 2_000, interval: 5 }).toBe(1);
      const started = performance.now();
      await c.stop();
      // It did not wait out the 30 s timeout: a tenth of it is far more than stopping needs.
      expect(performance.now() - started).toBeLessThan(30_000 / 10);
      const error = (await run.catch((e: unknown) => e)) as HttpError;
      expect(error).toMatchObject({ status: 503, code: "master_closing" });
      expect(store.saved).toHaveLength(0);
      await c.stop(); // idempotent
    });
  });
});
