import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Cleanup, chainClient, chainNode } from "./_test-chain.js";
import { commitEpochOf, firstCommitBlockOf } from "./commit-reveal.js";
import {
  advanceSchedule,
  commitEpochIn,
  type EpochSchedule,
  epochOfBlock,
  firstCommitBlockOfEpoch,
  plannedRevealBlock,
  readEpochSchedule,
  revealEpochOfBlock,
  revealRoundFor,
  runtimeFeatures,
} from "./epoch-model.js";
import { firstBlockOfEpoch } from "./rules/epoch.js";
import { readSubnetRules } from "./subnet-rules.js";
import { revealRound } from "./weights-tlock-payload.js";

const formula = (block: number, tempo = 9, netuid = 1): EpochSchedule => ({
  model: "block-number",
  netuid,
  specVersion: 393,
  block,
  tempo,
});

const counter = (
  block: number,
  over: Partial<Extract<EpochSchedule, { model: "counter" }>["state"]> = {},
): EpochSchedule => {
  const state = {
    epochIndex: 40,
    lastEpochBlock: 100,
    pendingEpochAt: 0,
    blocksSinceLastStep: block - 100,
    tempo: 10,
    block,
    ...over,
  };
  return { model: "counter", netuid: 1, specVersion: 424, block, tempo: state.tempo, state };
};

const clock = {
  revealPeriodEpochs: 1,
  blockTimeSeconds: 12,
  nowSeconds: 1_700_000_000,
  genesisTime: 1_692_803_367,
  period: 3,
};

describe("the epoch model on the spec-393 block-number runtime", () => {
  it("is today's formula, unchanged", () => {
    for (let block = 0; block < 60; block++) {
      const s = formula(block);
      expect(commitEpochIn(s, block + 1)).toBe(commitEpochOf(1, 9, block + 1));
      expect(firstCommitBlockOfEpoch(s, 7)).toBe(firstCommitBlockOf(1, 9, 7));
      expect(revealRoundFor(s, clock)).toBe(
        revealRound({ currentBlock: block, netuid: 1, tempo: 9, ...clock }),
      );
    }
    expect(plannedRevealBlock(formula(25), 2)).toBe(firstBlockOfEpoch(1, 9, 2 + 2));
    expect(epochOfBlock(formula(25))).toBe(2);
  });
});

describe("the epoch model on the counter runtime", () => {
  it("tells the epoch a block revealed for from its parent's state, a deferral included", () => {
    // Due at 110 (LastEpochBlock 100, tempo 10): the reveal step of 110 works from epoch 41.
    const before = counter(109);
    // The epoch ran in 110: the stored counter says 41 too.
    const ran = counter(110, { epochIndex: 41, lastEpochBlock: 110, blocksSinceLastStep: 0 });
    expect(revealEpochOfBlock(before, ran)).toBe(41);
    // Deferred past the per-block cap (PendingEpochAt 111): the counter stays 40, yet 110 revealed
    // the commits due in 41 (found in the fault run: read from the block alone, such a reveal
    // looked like a commit taken out before its reveal epoch).
    const deferred = counter(110, { pendingEpochAt: 111 });
    expect(epochOfBlock(deferred)).toBe(40);
    expect(revealEpochOfBlock(before, deferred)).toBe(41);
    // Not due: the counter.
    expect(revealEpochOfBlock(counter(104), counter(105))).toBe(40);
    // The block that migrated from the formula (no counter before it): its own epoch.
    expect(revealEpochOfBlock(formula(109), ran)).toBe(41);
  });

  it("keys commits by SubnetEpochIndex with its lookahead, whatever the block number says", () => {
    // LastEpochBlock 100, tempo 10: the next epoch fires at 110, so 105's commits go to 40.
    const s = counter(105);
    expect(epochOfBlock(s)).toBe(40);
    expect(commitEpochIn(s, 106)).toBe(40);
    expect(commitEpochIn(s, 110)).toBe(41);
    expect(commitEpochIn(s, 111)).toBe(41);
    expect(firstCommitBlockOfEpoch(s, 41)).toBe(110);
    expect(firstCommitBlockOfEpoch(s, 42)).toBe(120);
    // Read after the firing block ran (how readCommitEpochs sees its inclusion block).
    const fired = counter(110, { epochIndex: 41, lastEpochBlock: 110, blocksSinceLastStep: 0 });
    expect(commitEpochIn(fired, 110)).toBe(41);
  });

  it("reveals at the firing block of commit epoch + period and aims the round 3 blocks past it", () => {
    const s = counter(105);
    expect(plannedRevealBlock(s, 1)).toBe(110);
    expect(plannedRevealBlock(s, 2)).toBe(120);
    // (110 + 3 - 105) blocks of 12 s from now: (1700000000 + 96 - 1692803367) / 3 = 2398909.67.
    expect(revealRoundFor(s, clock)).toBe(2_398_909);
    // The formula, at the same block, would aim at its own epoch boundary (block 109 for netuid 1,
    // tempo 10): a round before the chain's reveal block.
    expect(revealRound({ currentBlock: 105, netuid: 1, tempo: 10, ...clock })).toBeLessThan(
      revealRoundFor(s, clock),
    );
  });

  it("follows a deferral and a trigger read from PendingEpochAt", () => {
    const triggered = counter(105, { pendingEpochAt: 107 });
    expect(commitEpochIn(triggered, 107)).toBe(41);
    expect(plannedRevealBlock(triggered, 1)).toBe(107);
    expect(firstCommitBlockOfEpoch(triggered, 42)).toBe(117);
  });

  it("runs a schedule forward when no newer read is at hand", () => {
    const s = advanceSchedule(counter(105), 112);
    expect(s.block).toBe(112);
    expect(epochOfBlock(s)).toBe(41);
    expect(advanceSchedule(s, 100)).toBe(s);
  });
});

describe("the epoch model chosen by a running local subtensor", () => {
  const cleanup = new Cleanup();
  let url: string;

  beforeAll(async () => {
    const node = await chainNode(cleanup, { tempo: 9 });
    await node.registerNeuron(1, "5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY", true);
    await node.nextBlock();
    url = node.url;
  }, 60_000);
  afterAll(() => cleanup.run());

  it("reads the model from the metadata of the block's runtime", async () => {
    const client = chainClient(cleanup, [url]);
    const { features, schedule } = await client.call("reading the schedule", async (api) => {
      const header = await api.rpc.chain.getHeader();
      const best = { number: header.number.toNumber(), hash: header.hash.toHex() };
      return {
        features: runtimeFeatures(await api.at(best.hash)),
        schedule: await readEpochSchedule(api, best, 1),
      };
    });
    expect(schedule.model).toBe(features.epochModel);
    expect(schedule.specVersion).toBe(features.specVersion);
    expect(schedule.tempo).toBe(9);
    expect(features.ownerExempt).toBe(features.specVersion >= 401);
    // The rules carry the runtime, the owner's uid and the hotkey's stake check.
    const rules = await readSubnetRules(client, 1, {
      hotkey: "5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY",
    });
    expect(rules.runtime).toEqual(features);
    expect(rules.stake).toMatchObject({ threshold: 0n, meets: true });
    if (features.specVersion < 423) {
      // The spec-393 runtime: no SubnetEpochIndex, the formula.
      expect(features.epochModel).toBe("block-number");
    } else {
      // A node serving spec 424's metadata (the local subtensor's current runtime): the counter.
      expect(features.epochModel).toBe("counter");
      expect(schedule.model === "counter" && schedule.state.tempo).toBe(9);
    }
  });
});
