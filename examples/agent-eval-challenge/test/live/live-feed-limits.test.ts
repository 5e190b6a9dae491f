// The feed's connection behaviour, on a challenge whose live routes are registered with short
// settings (the options `liveRoutes` takes): the heartbeat comment while idle, the per-instance
// limit on open feeds (429 live_feed_busy), and a feed freed when its client goes away.

import { defineChallenge } from "@platform/challenge-sdk";
import { createMinerKey, startTestChallenge, testBackends } from "@platform/challenge-sdk/testing";
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
    let again: Response | undefined;
    for (let i = 0; i < 50; i++) {
      again = await t.fetch(`/v1/submissions/${id}/live`);
      if (again.status === 200) break;
      await again.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(again!.status).toBe(200);
    await again!.body!.cancel();
  });
});
