// The internal credential as the interface says: bearer plus x-core-challenge-slug; 503 when no
// token is configured, 401 for a wrong token, 403 for a wrong or missing slug.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { challenge } from "../src/challenge.js";
import { type AgentEvalTest, startAgentEval } from "./agent-eval-kit.js";

describe("internal routes", () => {
  let t: AgentEvalTest;
  beforeAll(async () => {
    t = await startAgentEval("pglite");
  });
  afterAll(() => t?.close());

  const weights = (headers: Record<string, string>) =>
    t.fetch("/internal/v1/get_weights", { headers });

  it("take the bearer and the slug header; refuse a wrong token (401) and a wrong or missing slug (403)", async () => {
    const bearer = `Bearer ${t.token}`;
    expect(
      (await weights({ authorization: bearer, "x-core-challenge-slug": "agent-eval" })).status,
    ).toBe(200);
    expect(
      (await weights({ authorization: `${bearer}x`, "x-core-challenge-slug": "agent-eval" }))
        .status,
    ).toBe(401);
    expect(
      (await weights({ authorization: bearer, "x-core-challenge-slug": "scoring" })).status,
    ).toBe(403);
    expect((await weights({ authorization: bearer })).status).toBe(403);
  });

  it("answer 503 internal_auth_unconfigured when no token is configured", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "agent-eval-no-token-"));
    const running = await challenge.start({
      env: { LOG_LEVEL: "silent", ATTESTATION_VERIFIER: "dev" },
      dataDir,
      host: "127.0.0.1",
      port: 0,
      allowNoToken: true,
    });
    try {
      const response = await fetch(`${running.url}/internal/v1/get_weights`, {
        headers: { authorization: "Bearer anything", "x-core-challenge-slug": "agent-eval" },
      });
      expect(response.status).toBe(503);
      expect(((await response.json()) as { code: string }).code).toBe("internal_auth_unconfigured");
      expect((await fetch(`${running.url}/submissions`)).status).toBe(200);
    } finally {
      await running.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
