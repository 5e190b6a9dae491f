import { testBackends } from "@platform/core/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  deadOrigin,
  type EchoUpstream,
  rawRequest,
  startEchoUpstream,
} from "../../test/proxy/echo-upstream.js";
import { registerChallenge } from "../../test/proxy/register-challenge.js";
import { startTestMaster, type TestMaster } from "../../test/test-master.js";

describe.each(await testBackends())("submission-status read on %s", (backend) => {
  let t: TestMaster;
  let up: EchoUpstream;
  let base: string;

  beforeAll(async () => {
    up = await startEchoUpstream();
    t = await startTestMaster(backend, (config) => {
      config.proxy.timeoutMs = 1_000;
    });
    base = (await t.listen()).url;
    await registerChallenge(t, "live", "active", up.url);
    await registerChallenge(t, "paused", "inactive", up.url);
    await registerChallenge(t, "wip", "draft", up.url);
    await registerChallenge(t, "dead", "active", await deadOrigin());
    up.on("/v1/submissions/sub-1", (_req, res) => {
      res.writeHead(200, {
        "content-type": "application/vnd.challenge+json; charset=utf-8",
        "x-challenge": "scoring",
      });
      res.end('{"id":"sub-1","status":"scored","final_score":0.42}');
    });
    up.on("/v1/submissions/missing", (_req, res) => {
      res.writeHead(404, { "content-type": "application/json" });
      res.end('{"detail":"Submission not found"}');
    });
  });
  afterAll(async () => {
    await t.close();
    await up.close();
  });
  beforeEach(() => {
    up.seen.length = 0;
  });

  const get = (path: string, headers: Record<string, string> = {}) =>
    rawRequest(base, { path, headers });

  it("forwards to /v1/submissions/{id} and returns the response unchanged", async () => {
    const res = await get("/v1/challenges/live/submissions/sub-1");
    expect(res.status).toBe(200);
    expect(res.text).toBe('{"id":"sub-1","status":"scored","final_score":0.42}');
    expect(res.headers["content-type"]).toBe("application/vnd.challenge+json; charset=utf-8");
    expect(res.headers["x-challenge"]).toBe("scoring");
    expect(up.seen.map((seen) => [seen.method, seen.url])).toEqual([
      ["GET", "/v1/submissions/sub-1"],
    ]);
  });

  it("keeps the query and marks the request as proxied, without forged identity", async () => {
    await get("/v1/challenges/live/submissions/abc?verbose=1&x=%2F", {
      authorization: "Bearer stolen",
      "x-platform-verified-hotkey": "5Evil",
      "x-platform-challenge-slug": "evil",
    });
    const [seen] = up.seen;
    expect(seen!.url).toBe("/v1/submissions/abc?verbose=1&x=%2F");
    expect(seen!.headers["x-platform-proxy"]).toEqual(["true"]);
    expect(seen!.headers["x-platform-challenge-slug"]).toEqual(["live"]);
    // The client's own bearer is the challenge's business (its status route may require one).
    expect(seen!.headers.authorization).toEqual(["Bearer stolen"]);
    expect(seen!.headers["x-platform-verified-hotkey"]).toBeUndefined();
  });

  it("passes the challenge's own 404 through as it is", async () => {
    const res = await get("/v1/challenges/live/submissions/missing");
    expect([res.status, res.text]).toEqual([404, '{"detail":"Submission not found"}']);
  });

  it("re-encodes an id so the challenge decodes exactly the id that was checked", async () => {
    await get("/v1/challenges/live/submissions/a%2520b");
    expect(up.seen[0]!.url).toBe("/v1/submissions/a%20b");
  });

  it.each(["ghost", "paused", "wip"])("answers 404 challenge_not_found for %s", async (slug) => {
    const res = await get(`/v1/challenges/${slug}/submissions/sub-1`);
    expect(res.status).toBe(404);
    expect(res.json()).toMatchObject({ code: "challenge_not_found" });
    expect(up.seen).toHaveLength(0);
  });

  it("answers 502 upstream_unavailable for an unreachable challenge", async () => {
    const res = await get("/v1/challenges/dead/submissions/sub-1");
    expect(res.status).toBe(502);
    expect(res.json()).toMatchObject({ code: "upstream_unavailable" });
    expect(res.text).not.toContain("127.0.0.1");
  });

  it.each([
    "..%2f..%2finternal%2fv1%2fget_weights",
    "%2e%2e%252finternal",
    "%252e%252e",
    "a%5cb",
    "a%252fb",
    "..;x",
    "x%00",
    `${"a".repeat(257)}`,
  ])("answers 400 invalid_submission_id for %s and forwards nothing", async (id) => {
    const res = await get(`/v1/challenges/live/submissions/${id}`);
    expect(res.status).toBe(400);
    expect(res.json()).toMatchObject({ code: "invalid_submission_id" });
    expect(up.seen).toHaveLength(0);
  });

  it("never forwards ids that URL parsing resolves away", async () => {
    for (const id of ["..", "%2e%2e", "."]) {
      const res = await get(`/v1/challenges/live/submissions/${id}`);
      expect([id, res.status]).toEqual([id, 404]);
    }
    expect(up.seen).toHaveLength(0);
  });
});
