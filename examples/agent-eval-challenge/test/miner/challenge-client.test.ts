// The miner's challenge client against the challenge on a real socket (no Docker: the flow's
// workers are not run here): it finds the challenge at its own URL, signs each request with
// the miner's hotkey (a fresh nonce each, so two identical requests both pass), and turns a
// refusal into a MinerError with the challenge's status and stable code.
import { createMinerKey, type MinerKey, testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, MinerError } from "../../src/miner/challenge-client.js";
import { type AgentEvalTest, agentZip, startAgentEval } from "../agent-eval-kit.js";

const [backend] = await testBackends();

/** The MinerError a request was refused with. */
async function refusal(request: Promise<unknown>): Promise<MinerError> {
  const error = await request.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(MinerError);
  return error as MinerError;
}

describe(`the miner's challenge client (on ${backend})`, () => {
  let t: AgentEvalTest;
  let miner: MinerKey;
  beforeAll(async () => {
    t = await startAgentEval(backend!, { SUBMISSION_WINDOW_SECONDS: "0" });
    miner = await createMinerKey();
  }, 60_000);
  afterAll(() => t?.close());

  const submit = (client: Awaited<ReturnType<typeof connect>>) =>
    client.signed<{ id: number }>("POST", "/submissions", {
      name: "agent",
      artifact_b64: agentZip().toString("base64"),
    });

  it("finds the challenge at its own URL and submits, signed", async () => {
    const client = await connect(`${t.url}/`, miner);
    expect(client).toMatchObject({ base: t.url, master: null, internal: t.url });
    const first = await submit(client);
    const second = await submit(client);
    expect(second.id).toBeGreaterThan(first.id);
  });

  it("turns a refusal into a MinerError with the status and the stable code", async () => {
    const client = await connect(t.url, miner);
    const { id } = await submit(client);
    // No env set or confirmed: the launch gate refuses.
    const refused = await refusal(client.signed("POST", `/submissions/${id}/launch`));
    expect(refused).toMatchObject({ status: 412 });
    expect(refused.code).toEqual(expect.any(String));
    expect(refused.message).toMatch(new RegExp(`^POST /submissions/${id}/launch answered 412 `));
    // Another miner's submission is not this one's to read.
    const other = await connect(t.url, await createMinerKey());
    const foreign = await refusal(
      other.signed("GET", `/submissions/${id}/review/history?limit=16`),
    );
    expect(foreign.status).toBeGreaterThanOrEqual(400);
    expect(foreign.status).toBeLessThan(500);
  });

  it("reads an unsigned JSON answer, and null for a 404", async () => {
    const client = await connect(t.url, miner);
    expect(await client.get(`${t.url}/health`)).toMatchObject({ slug: "agent-eval" });
    expect(await client.get(`${t.url}/no-such-route`)).toBeNull();
  });

  it("says plainly when nothing answers", async () => {
    await expect(connect("http://127.0.0.1:1", miner)).rejects.toThrow(/neither a master/);
  });
});
