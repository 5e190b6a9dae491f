// The master's in-process validator on a subnet with commit-reveal on (as on finney): it commits
// timelocked weights to the local subtensor's own drand beacon, the chain reveals them an epoch
// later, and GET /v1/weights/chain shows the revealed commit (the block that revealed it, the
// commit's block and round). Then the health gate: a challenge with emission that fails more
// collections in a row than the grace closes it, the view names the challenge, and no commit
// is sent while it stays closed.

import { SubmissionStore } from "@platform/chain";
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

const NETUID = 2;
const GRACE = 1;
const backend = (await testBackends())[0]!;

interface ChainView {
  validator: string;
  last_confirmed: {
    kind: string;
    block: { number: number };
    commit_block?: { number: number };
    reveal_round?: number;
    uids: number[];
    weights_u16: number[];
  } | null;
  last_attempt: { kind: string; status: string } | null;
  health_gate: { status: string; grace: number; challenge?: string; failures?: number };
}

describe(`the master's validator under commit-reveal (${backend})`, () => {
  let chain: LocalSubtensor;
  let challenge: FakeChallenge;
  let t: TestMaster;
  let failing = false;

  beforeAll(async () => {
    await initCrypto();
    const [validator, minerA, minerB] = [VALIDATOR_PHRASE, MINER_A_PHRASE, MINER_B_PHRASE].map(
      (phrase) => keypairFromMnemonic(phrase).address,
    ) as [string, string, string];
    // Tempo 5: an epoch is 5 blocks on the counter model (0.75 s), so a commit reveals within a
    // second or two. Not shorter: the round is aimed 3 blocks into the reveal epoch and its pulse
    // serves reveals from the next block on, so a 3- or 4-block epoch expires most commits.
    chain = await startLocalSubtensor({
      blockMs: 150,
      tempo: 5,
      simulatedBlockMs: 3_000,
      subnetDefaults: {
        CommitRevealWeightsEnabled: true,
        WeightsSetRateLimit: 0,
        MinAllowedWeights: 1,
      },
    });
    await chain.registerNeuron(NETUID, validator, true);
    await chain.registerNeuron(NETUID, minerA);
    await chain.registerNeuron(NETUID, minerB);
    challenge = await startFakeChallenge({
      slug: "alpha",
      reply: () =>
        failing
          ? { status: 500, json: { detail: "down" } }
          : {
              json: {
                challenge_slug: "alpha",
                epoch: 1,
                weights: { [minerA]: 3, [minerB]: 1 },
              },
            },
    });
    t = await startChainMaster(backend, {
      chainUrl: chain.url,
      netuid: NETUID,
      challenge,
      chain: { healthGateGrace: GRACE },
    });
    for (let i = 0; i < 4; i++) await chain.nextBlock();
  });
  afterAll(async () => {
    await t?.close();
    await challenge?.close();
    await chain?.close();
  });

  const view = async () => (await (await t.publicFetch("/v1/weights/chain")).json()) as ChainView;

  it("commits to the local beacon, never sets weights directly, and shows the confirmed reveal", async () => {
    await t.listen();
    const collected = await t.fetch("/v1/admin/weights/collect", jsonInit("POST", {}, t.admin));
    expect(collected.status).toBe(200);

    const confirmed = await until("a revealed commit", async () => {
      return (await view()).last_confirmed ?? undefined;
    });
    expect(confirmed.kind).toBe("commit");
    expect(confirmed.uids).toEqual([1, 2]);
    expect(confirmed.weights_u16).toEqual([65_535, 21_845]);
    // Revealed after the block that included the commit, to the round it was locked to.
    expect(confirmed.commit_block?.number).toBeLessThan(confirmed.block.number);
    expect(confirmed.reveal_round).toBeGreaterThan(0);

    // Every attempt the validator recorded was a commit: none was a set_weights.
    const store = new SubmissionStore(t.sql);
    const attempts = await store.recent({ netuid: NETUID, hotkey: (await view()).validator });
    expect(attempts.length).toBeGreaterThan(0);
    expect(new Set(attempts.map((a) => a.kind))).toEqual(new Set(["commit"]));

    const metrics = await (
      await t.adminFetch("/metrics", { headers: { authorization: `Bearer ${t.adminToken}` } })
    ).text();
    expect(metrics).toMatch(/platform_chain_submissions_total\{outcome="committed"\} [1-9]/);
    expect(metrics).toMatch(/platform_chain_submissions_total\{outcome="revealed"\} [1-9]/);
    expect(metrics).toMatch(
      new RegExp(`platform_chain_weights_last_confirmed_block ${confirmed.block.number}\\b`),
    );
    expect((await view()).health_gate).toEqual({ status: "open", grace: GRACE, overridden: false });
    // The dashboard says where the weights landed (the reveal's block, or a later one's).
    const svg = await (await t.publicFetch("/v1/challenges/dashboard.svg")).text();
    const shown = /weights on chain: revealed in block #(\d+)/.exec(svg);
    expect(Number(shown?.[1])).toBeGreaterThanOrEqual(confirmed.block.number);
  });

  it("holds every commit while a challenge with emission fails more collections than the grace", async () => {
    failing = true;
    // grace + 1 failed collections in a row close the gate.
    for (let i = 0; i <= GRACE; i++) {
      const run = await t.fetch("/v1/admin/weights/collect", jsonInit("POST", {}, t.admin));
      expect(run.status).toBe(200);
    }
    const closed = await view();
    expect(closed.health_gate).toMatchObject({
      status: "closed",
      challenge: "alpha",
      failures: GRACE + 1,
    });
    // Let the validator finish what it had in flight, then count: no commit is added over
    // several epochs (it would commit once per epoch with the gate open).
    const store = new SubmissionStore(t.sql);
    const count = async () =>
      (await store.recent({ netuid: NETUID, hotkey: closed.validator, limit: 1000 })).length;
    for (let i = 0; i < 8; i++) await chain.nextBlock();
    const before = await count();
    for (let i = 0; i < 16; i++) await chain.nextBlock();
    expect(await count()).toBe(before);

    // A good collection opens it again, and commits resume.
    failing = false;
    const run = await t.fetch("/v1/admin/weights/collect", jsonInit("POST", {}, t.admin));
    expect(run.status).toBe(200);
    expect((await view()).health_gate.status).toBe("open");
    await until("a commit after the gate opened", async () =>
      (await count()) > before ? true : undefined,
    );
  });
});
