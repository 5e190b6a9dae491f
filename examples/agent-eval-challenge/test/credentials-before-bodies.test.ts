// Credentials before bodies (issue 24, item 6): every route of the review VM (assignment bearer)
// and of the eval VM (run bearer, telemetry session) answers a request without its credential,
// or with a forged one, 401 invalid_token BEFORE it parses or validates anything. The attack:
// an anonymous caller posts a body that matches no schema; a route that validated first would
// answer 422 and list the schema's fields (its `loc`s), telling the caller its interface.
import { createMinerKey, type MinerKey, testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { challenge } from "../src/challenge.js";
import { type AgentEvalTest, agentZip, startAgentEval } from "./agent-eval-kit.js";
import { reviewCalls } from "./review/review-test-kit.js";

// Every route an eval or review VM calls with a token the challenge issued.
const tokenRoutes = challenge
  .routes()
  .filter((route) => /^\/(review|evaluation)\/v1\//.test(route.path));

describe.each(await testBackends())("credentials before bodies on %s", (backend) => {
  let t: AgentEvalTest;
  let assignmentId: string;
  let assignmentToken: string;
  let miner: MinerKey;
  let submissionId: number;
  beforeAll(async () => {
    t = await startAgentEval(backend);
    miner = await createMinerKey();
    const submitted = await t.signedFetch("/submissions", {
      method: "POST",
      miner,
      json: { name: "agent", artifact_b64: agentZip().toString("base64") },
    });
    const { id } = (await submitted.json()) as { id: number };
    submissionId = id;
    const prepared = (await (await reviewCalls(t, miner).prepare(id)).json()) as {
      assignment_id: string;
      secret_delivery: { token: string };
    };
    assignmentId = prepared.assignment_id;
    assignmentToken = prepared.secret_delivery.token;
  });
  afterAll(() => t?.close());

  it("lists every VM route with its own bearer as the credential", () => {
    expect(tokenRoutes.length).toBeGreaterThanOrEqual(12);
    for (const route of tokenRoutes) {
      expect(route.credential, `${route.methods[0]} ${route.path}`).toBe("bearer");
    }
  });

  it("answers an anonymous or forged request 401 invalid_token, never a 422 naming fields", async () => {
    const forged = `${assignmentId}.${"A".repeat(43)}`;
    for (const route of tokenRoutes) {
      const method = route.methods[0]!;
      const path = route.path.replace(/:([a-z_]+)/g, "~~not-an-id~~");
      for (const authorization of [undefined, "Bearer nonsense", `Bearer ${forged}`]) {
        const response = await t.fetch(path, {
          method,
          headers: {
            "content-type": "application/json",
            ...(authorization ? { authorization } : {}),
          },
          ...(method === "GET" ? {} : { body: JSON.stringify({ unexpected: [null] }) }),
        });
        const what = `${method} ${route.path} with ${authorization ?? "no bearer"}`;
        const text = await response.text();
        expect(response.status, `${what}: ${text}`).toBe(401);
        expect(JSON.parse(text), what).toMatchObject({ code: "invalid_token" });
        expect(text, what).not.toContain("loc");
      }
    }
  });

  it("a token of one assignment opens nothing of another, before the body is read", async () => {
    const other = "x".repeat(assignmentId.length);
    const response = await t.fetch(`/review/v1/assignments/${other}/failure`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${assignmentToken}` },
      body: "{not json",
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ code: "invalid_token" });
  });

  it("with the right token, the body is validated as before (422)", async () => {
    const response = await t.fetch(`/review/v1/assignments/${assignmentId}/failure`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${assignmentToken}` },
      body: JSON.stringify({ unexpected: [null] }),
    });
    expect(response.status).toBe(422);
  });

  // Last: it revokes the assignment the tests above use.
  it("a revoked token is refused before its body too: 410 on a write, 401 on a read", async () => {
    const cancelled = await reviewCalls(t, miner).cancel(submissionId, assignmentId);
    expect(cancelled.status, await cancelled.clone().text()).toBe(200);
    const write = await t.fetch(`/review/v1/assignments/${assignmentId}/failure`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${assignmentToken}` },
      body: JSON.stringify({ unexpected: [null] }),
    });
    const text = await write.text();
    expect(write.status, text).toBe(410);
    expect(JSON.parse(text)).toMatchObject({ code: "capability_revoked", state: "cancelled" });
    expect(text).not.toContain("loc");
    const read = await t.fetch(`/review/v1/assignments/${assignmentId}`, {
      headers: { authorization: `Bearer ${assignmentToken}` },
    });
    expect(read.status).toBe(401);
    expect(await read.json()).toMatchObject({ code: "invalid_token" });
  });
});
