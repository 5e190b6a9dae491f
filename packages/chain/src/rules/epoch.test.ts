import { describe, expect, it } from "vitest";
import { revealRound } from "../weights-tlock-payload.js";
import { blocksUntilNextEpoch, epochIndex, firstBlockOfEpoch, shouldRunEpoch } from "./epoch.js";

describe("spec-393 epochs", () => {
  it("runs each subnet's epoch where run_coinbase.rs's table says", () => {
    // tempo | netuid | first epoch block (the doc comment of blocks_until_next_epoch).
    const table: [number, number, number][] = [
      [1, 0, 0],
      [1, 1, 1],
      [2, 0, 1],
      [2, 1, 0],
      [100, 0, 99],
      [100, 1, 98],
    ];
    for (const [tempo, netuid, first] of table) {
      expect(blocksUntilNextEpoch(netuid, tempo, 0)).toBe(first);
      expect(shouldRunEpoch(netuid, tempo, first)).toBe(true);
      expect(shouldRunEpoch(netuid, tempo, first + tempo + 1)).toBe(true);
      expect(shouldRunEpoch(netuid, tempo, first + 1)).toBe(false);
    }
    expect(shouldRunEpoch(3, 0, 5)).toBe(false);
    expect(blocksUntilNextEpoch(3, 0, 5)).toBe(Number.POSITIVE_INFINITY);
  });

  it("moves to the next epoch index right after the block that runs the epoch", () => {
    for (const [netuid, tempo] of [
      [1, 9],
      [7, 360],
      [4095, 10],
    ] as const) {
      for (let block = 0; block < 3 * (tempo + 1); block++) {
        const next = epochIndex(netuid, tempo, block + 1);
        expect(next - epochIndex(netuid, tempo, block)).toBe(
          shouldRunEpoch(netuid, tempo, block) ? 1 : 0,
        );
      }
      // (A large netuid starts mid-epoch: its epoch index at block 0 is already above 0.)
      const epoch = epochIndex(netuid, tempo, 0) + 5;
      expect(epochIndex(netuid, tempo, firstBlockOfEpoch(netuid, tempo, epoch))).toBe(epoch);
      expect(epochIndex(netuid, tempo, firstBlockOfEpoch(netuid, tempo, epoch) - 1)).toBe(
        epoch - 1,
      );
    }
  });

  it("agrees with the reveal-round formula on the first block of the reveal epoch", () => {
    // revealRound aims 3 blocks past first_reveal_blk; with a 12 s block and a 3 s period that is
    // 4 rounds a block, so the target round tells where the formula thinks the epoch starts.
    const currentBlock = 1234;
    const [netuid, tempo, period] = [3, 20, 2];
    const round = revealRound({
      currentBlock,
      netuid,
      tempo,
      revealPeriodEpochs: period,
      blockTimeSeconds: 12,
      nowSeconds: 1_000_000,
      genesisTime: 0,
      period: 3,
    });
    const first = firstBlockOfEpoch(
      netuid,
      tempo,
      epochIndex(netuid, tempo, currentBlock) + period,
    );
    expect(round).toBe(Math.floor((1_000_000 + (first + 3 - currentBlock) * 12) / 3));
  });
});
