// The master with PLATFORM_CHAIN_ENDPOINTS, PLATFORM_METAGRAPH=chain and a validator hotkey file,
// against the local subtensor through @polkadot/api: a challenge's weights become uids from the
// chain's own Keys, a snapshot, and a set_weights confirmed from the block, visible at
// GET /v1/weights/chain, in /metrics and /readyz.

import { type LocalSubtensor, startLocalSubtensor } from "@platform/chain/local";
import { initCrypto, keypairFromMnemonic } from "@platform/core";
import { testBackends } from "@platform/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonInit, type TestMaster } from "../test-master.js";
import { type FakeChallenge, startFakeChallenge } from "../weights/fake-challenge.js";
import {
  MINER_A_PHRASE,
  MINER_B_PHRASE,
  startChainMaster,
  until,
  VALIDATOR_PHRASE,
} from "./chain-master-kit.js";

const NETUID = 3;
const backend = (await testBackends())[0]!;

describe(`the master's chain wiring (${backend})`, () => {
  let chain: LocalSubtensor;
  let challenge: FakeChallenge;
  let t: TestMaster;
  let minerA: string;
  let minerB: string;
  let validator: string;

  beforeAll(async () => {
    await initCrypto();
    [validator, minerA, minerB] = [VALIDATOR_PHRASE, MINER_A_PHRASE, MINER_B_PHRASE].map(
      (phrase) => keypairFromMnemonic(phrase).address,
    ) as [string, string, string];
    chain = await startLocalSubtensor({
      blockMs: 150,
      subnetDefaults: {
        CommitRevealWeightsEnabled: false,
        WeightsSetRateLimit: 0,
        MinAllowedWeights: 1,
      },
    });
    await chain.registerNeuron(NETUID, validator, true);
    await chain.registerNeuron(NETUID, minerA);
    await chain.registerNeuron(NETUID, minerB);
    challenge = await startFakeChallenge({
      slug: "alpha",
      weights: { [minerA]: 3, [minerB]: 1, "5NotOnChain-hotkey": 1 },
    });
    t = await startChainMaster(backend, { chainUrl: chain.url, netuid: NETUID, challenge });
    for (let i = 0; i < 4; i++) await chain.nextBlock();
  });
  afterAll(async () => {
    await t?.close();
    await challenge?.close();
    await chain?.close();
  });

  it("maps the challenge's hotkeys with the chain's Keys and confirms its weights on chain", async () => {
    await t.listen();
    const collected = await t.fetch("/v1/admin/weights/collect", jsonInit("POST", {}, t.admin));
    expect(collected.status).toBe(200);
    const snapshot = (await collected.json()) as {
      uids: number[];
      hotkeys: Record<string, number>;
      collection: { metagraph: { status: string } };
    };
    expect(snapshot.collection.metagraph.status, JSON.stringify(snapshot)).toBe("ok");
    // uids from the chain: the miners registered as 1 and 2; the unknown hotkey dropped.
    expect(snapshot.uids, JSON.stringify(snapshot)).toEqual(expect.arrayContaining([1, 2]));

    const onChain = await until("a confirmed submission", async () => {
      const body = (await (await t.publicFetch("/v1/weights/chain")).json()) as {
        last_confirmed: { block: { number: number }; uids: number[]; weights_u16: number[] } | null;
      };
      return body.last_confirmed ?? undefined;
    });
    expect(onChain.uids).toEqual([1, 2]);
    expect(onChain.weights_u16).toEqual([65_535, 21_845]);

    const view = (await (await t.publicFetch(`/v1/weights/chain?hotkey=${minerA}`)).json()) as {
      netuid: number;
      validator: string;
      uid: number | null;
      metagraph: { hotkeys: number } | null;
    };
    expect(view).toMatchObject({ netuid: NETUID, validator, uid: 1, metagraph: { hotkeys: 3 } });
    const stranger = (await (await t.publicFetch("/v1/weights/chain?hotkey=5Nobody")).json()) as {
      uid: number | null;
    };
    expect(stranger.uid).toBeNull();

    const metrics = await (
      await t.adminFetch("/metrics", { headers: { authorization: `Bearer ${t.adminToken}` } })
    ).text();
    expect(metrics).toMatch(
      new RegExp(`platform_chain_weights_last_confirmed_block ${onChain.block.number}\\b`),
    );
    expect(metrics).toMatch(/platform_chain_submissions_total\{outcome="finalized"\} [1-9]/);
    expect(metrics).toMatch(/platform_chain_metagraph_age_seconds \d/);
    const ready = (await (await t.adminFetch("/readyz")).json()) as {
      checks: Record<string, { status: string }>;
    };
    expect(ready.checks.chain?.status).toBe("ok");
  });

  it("is not ready while its chain is gone, and names the check", async () => {
    await chain.close();
    const failing = await until("/readyz to name the chain", async () => {
      const response = await t.adminFetch("/readyz");
      const body = (await response.json()) as { failing: string[] };
      return response.status === 503 && body.failing.includes("chain") ? body : undefined;
    });
    expect(failing.failing).toEqual(["chain"]);
  });
});
