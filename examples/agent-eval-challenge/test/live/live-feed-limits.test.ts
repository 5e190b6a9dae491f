// The feed's connection behaviour, on a challenge whose live routes are registered with short
// settings (the options `liveRoutes` takes): the heartbeat comment while idle, the per-instance
// limit on open feeds (429 live_feed_busy), and a feed freed when its client goes away. Then the
// shares of the pool: one client opening many feeds is refused after its share while another
// client still gets one (429 live_feed_client_limit), one submission's feeds are capped (429
// live_feed_submission_limit), and X-Forwarded-For names the client only when a trusted proxy
// sends it.

import { defineChallenge } from "@platform/challenge-sdk";
import {
  createMinerKey,
  startTestChallenge,
  testBackends,
  waitFor,
} from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAgentEvalState } from "../../src/agent-eval-state.js";
import { liveRoutes } from "../../src/live/live-routes.js";
import { Settings } from "../../src/settings.js";
import { submissionRoutes } from "../../src/submissions/submission-routes.js";
import { type AgentEvalTest, secretKeyFile } from "../agent-eval-kit.js";
import { submitAgent } from "../review/review-test-kit.js";
import { errorCode } from "./live-kit.js";

const shortLive = defineChallenge({
  slug: "agent-eval",
  version: "0.1.0",
  config: Settings,
  internalWithoutToken: "unavailable",
  migrations: new URL("../../migrations/", import.meta.url),
  setup: createAgentEvalState,
  routes: (router) => {
    submissionRoutes(router);
    liveRoutes(router, { heartbeatMs: 100, maxOpenFeeds: 1, feed: { pollMs: 20 } });
  },
  weights: () => ({}),
});

/** A challenge with small shares: 6 feeds in all, 2 from one client, 3 of one submission. */
const sharedLive = defineChallenge({
  slug: "agent-eval",
  version: "0.1.0",
  config: Settings,
  internalWithoutToken: "unavailable",
  migrations: new URL("../../migrations/", import.meta.url),
  setup: createAgentEvalState,
  routes: (router) => {
    submissionRoutes(router);
    liveRoutes(router, {
      heartbeatMs: 1000,
      maxOpenFeeds: 6,
      maxFeedsPerClient: 2,
      maxFeedsPerSubmission: 3,
      feed: { pollMs: 50 },
    });
  },
  weights: () => ({}),
});

describe.each(await testBackends())("live feed connections on %s", (backend) => {
  let t: AgentEvalTest;
  const key = secretKeyFile();
  beforeAll(async () => {
    t = (await startTestChallenge(shortLive, {
      backend,
      env: { SECRET_KEY_FILE: key.path, ATTESTATION_VERIFIER: "dev" },
    })) as unknown as AgentEvalTest;
  });
  afterAll(async () => {
    await t?.close();
    key.remove();
  });

  /** The raw text of an open feed until `until` holds (or the time is up). */
  async function readUntil(
    reader: ReadableStreamDefaultReader<Uint8Array>,
    until: (text: string) => boolean,
    timeoutMs = 5_000,
  ): Promise<string> {
    const decoder = new TextDecoder();
    let text = "";
    const deadline = Date.now() + timeoutMs;
    while (!until(text)) {
      if (Date.now() > deadline) throw new Error(`not seen in time; got ${JSON.stringify(text)}`);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const chunk = await Promise.race([
        reader.read(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error("no chunk in time")), timeoutMs);
        }),
      ]).finally(() => clearTimeout(timer));
      if (chunk.done) break;
      text += decoder.decode(chunk.value, { stream: true });
    }
    return text;
  }

  it("sends heartbeats while idle, limits open feeds and frees one when its client leaves", async () => {
    const id = await submitAgent(t, await createMinerKey());
    const first = await t.fetch(`/v1/submissions/${id}/live`);
    expect(first.status).toBe(200);
    const reader = first.body!.getReader();
    // The stored history (received), then idle: heartbeat comments, the stream still open.
    const text = await readUntil(reader, (seen) => (seen.match(/: ping\n\n/g) ?? []).length >= 2);
    expect(text).toContain("event: status");
    expect(text).toContain('"status":"received"');

    const second = await t.fetch(`/v1/submissions/${id}/live`);
    expect(second.status).toBe(429);
    expect(await errorCode(second)).toBe("live_feed_busy");
    expect(second.headers.get("retry-after")).toBe("5");

    await reader.cancel();
    // The server notices the client left, stops that feed's polling and frees its place.
    const again = await waitFor(
      async () => {
        const response = await t.fetch(`/v1/submissions/${id}/live`);
        if (response.status === 200) return response;
        await response.body?.cancel();
        return null;
      },
      { timeoutMs: 15_000, intervalMs: 50, what: "the feed's place freed" },
    );
    expect(again.status).toBe(200);
    await again.body!.cancel();
  });
});

const [firstBackend] = await testBackends();

describe("live feed shares", () => {
  let t: AgentEvalTest;
  const key = secretKeyFile();
  beforeAll(async () => {
    // The test talks to the service over loopback, a trusted proxy by default: each
    // X-Forwarded-For below is what the master would have appended for another client.
    t = (await startTestChallenge(sharedLive, {
      backend: firstBackend!,
      env: { SECRET_KEY_FILE: key.path, ATTESTATION_VERIFIER: "dev" },
    })) as unknown as AgentEvalTest;
  });
  afterAll(async () => {
    await t?.close();
    key.remove();
  });

  const open: Response[] = [];
  /** GET the feed of `id` as the client at `address` (as the proxy in front reports it). */
  async function feed(id: number, address: string): Promise<Response> {
    const response = await t.fetch(`/v1/submissions/${id}/live`, {
      headers: { "x-forwarded-for": `198.18.0.1, ${address}` },
    });
    if (response.status === 200) open.push(response);
    return response;
  }
  /**
   * Close every feed opened, and wait until the instance has freed their slots: all 6 open
   * again, 3 clients on each of two submissions.
   */
  async function closeAll(probes: [number, number]): Promise<void> {
    for (const response of open.splice(0)) await response.body!.cancel();
    await waitFor(
      async () => {
        const statuses: number[] = [];
        for (let n = 0; n < 6; n++) {
          statuses.push((await feed(probes[n % 2]!, `192.0.2.${100 + n}`)).status);
        }
        for (const response of open.splice(0)) await response.body!.cancel();
        return statuses.every((status) => status === 200);
      },
      { timeoutMs: 10_000, intervalMs: 50, what: "the feeds' slots freed" },
    );
  }
  const refusal = async (response: Response) => [response.status, await errorCode(response)];

  it("refuses one client past its share while another client still gets a feed", async () => {
    const [one, two] = [
      await submitAgent(t, await createMinerKey()),
      await submitAgent(t, await createMinerKey()),
    ];
    expect((await feed(one, "203.0.113.7")).status).toBe(200);
    expect((await feed(two, "203.0.113.7")).status).toBe(200);
    // The attacker's third feed, of either submission, is refused: its share is used up.
    const third = await feed(one, "203.0.113.7");
    expect(await refusal(third)).toEqual([429, "live_feed_client_limit"]);
    expect(third.headers.get("retry-after")).toBe("5");
    expect(await refusal(await feed(two, "203.0.113.7"))).toEqual([429, "live_feed_client_limit"]);
    // Another client is served meanwhile, on the same submissions.
    expect((await feed(one, "198.51.100.9")).status).toBe(200);
    // Rotating addresses inside one IPv6 /64 is still one client.
    expect((await feed(two, "2001:db8:1:2::a")).status).toBe(200);
    expect((await feed(two, "2001:db8:1:2:ffff::b")).status).toBe(200);
    expect(await refusal(await feed(one, "2001:db8:1:2::c"))).toEqual([
      429,
      "live_feed_client_limit",
    ]);
    await closeAll([one, two]);
  });

  it("caps one submission's feeds, whoever opens them, and keeps the others open to all", async () => {
    const [hot, other] = [
      await submitAgent(t, await createMinerKey()),
      await submitAgent(t, await createMinerKey()),
    ];
    for (const address of ["203.0.113.1", "203.0.113.2", "203.0.113.3"]) {
      expect((await feed(hot, address)).status).toBe(200);
    }
    expect(await refusal(await feed(hot, "203.0.113.4"))).toEqual([
      429,
      "live_feed_submission_limit",
    ]);
    expect((await feed(other, "203.0.113.4")).status).toBe(200);
    // The pool itself (6) still bounds the whole.
    expect((await feed(other, "203.0.113.5")).status).toBe(200);
    expect((await feed(other, "203.0.113.6")).status).toBe(200);
    expect(await refusal(await feed(other, "203.0.113.7"))).toEqual([429, "live_feed_busy"]);
    await closeAll([hot, other]);
  });
});

describe("live feed shares without a trusted proxy", () => {
  let t: AgentEvalTest;
  const key = secretKeyFile();
  beforeAll(async () => {
    t = (await startTestChallenge(sharedLive, {
      backend: firstBackend!,
      env: { SECRET_KEY_FILE: key.path, ATTESTATION_VERIFIER: "dev", TRUSTED_PROXIES: "none" },
    })) as unknown as AgentEvalTest;
  });
  afterAll(async () => {
    await t?.close();
    key.remove();
  });

  it("keys a client that reaches the service directly by its socket, whatever X-Forwarded-For says", async () => {
    const id = await submitAgent(t, await createMinerKey());
    const opened: Response[] = [];
    for (const claimed of ["203.0.113.10", "203.0.113.11"]) {
      const response = await t.fetch(`/v1/submissions/${id}/live`, {
        headers: { "x-forwarded-for": claimed },
      });
      expect(response.status).toBe(200);
      opened.push(response);
    }
    const forged = await t.fetch(`/v1/submissions/${id}/live`, {
      headers: { "x-forwarded-for": "203.0.113.12" },
    });
    expect(forged.status).toBe(429);
    expect(await errorCode(forged)).toBe("live_feed_client_limit");
    for (const response of opened) await response.body!.cancel();
  });
});
