import { describe, expect, it } from "vitest";
import {
  type CounterEpochState,
  counterAdvanceTo,
  counterEpochAt,
  counterFirstBlockOfEpoch,
  counterRunBlock,
  counterShouldRunEpoch,
  MAX_TEMPO,
  predictFirstRevealBlock,
} from "./counter-epoch.js";
import { epochIndex } from "./epoch.js";

const state = (over: Partial<CounterEpochState> = {}): CounterEpochState => ({
  epochIndex: 0,
  lastEpochBlock: 0,
  pendingEpochAt: 0,
  blocksSinceLastStep: 0,
  tempo: 50,
  block: 0,
  ...over,
});

// Known answers from bittensor-drand 2.0 itself: opentensor/bittensor-drand at commit
// d7baf9765f39d6c9c876777efe14a4bd11dbaf66, src/epoch_schedule_vectors.rs (`predict_vectors`,
// `commit_epoch_vectors`) and src/epoch_schedule.rs (`should_run_epoch_tempo_zero`,
// `should_run_epoch_auto_fire`).
describe("bittensor-drand 2.0 epoch schedule vectors", () => {
  it("tempo_zero: a subnet with tempo 0 never reveals", () => {
    const s = state({ lastEpochBlock: 10, tempo: 0, block: 10 });
    expect(() => predictFirstRevealBlock(s, 1)).toThrow(RangeError);
    expect(counterShouldRunEpoch(state({ lastEpochBlock: 100, tempo: 0, block: 120 }), 200)).toBe(
      false,
    );
  });

  it("cycle_reset: LastEpochBlock 10, tempo 50, head 10, period 1 -> first reveal block 60", () => {
    const s = state({ lastEpochBlock: 10, tempo: 50, block: 10 });
    expect(predictFirstRevealBlock(s, 1)).toBe(60);
  });

  it("pending_fires_before_auto: PendingEpochAt 95 before LastEpochBlock 80 + 20 -> 95", () => {
    const s = state({ lastEpochBlock: 80, pendingEpochAt: 95, tempo: 20, block: 91 });
    expect(predictFirstRevealBlock(s, 1)).toBe(95);
  });

  it("commit_epoch_at_extrinsic_block: LastEpochBlock 100, tempo 50, head 120 -> epoch 0", () => {
    const s = state({ lastEpochBlock: 100, tempo: 50, block: 120 });
    expect(counterEpochAt(s, s.block + 1)).toBe(0);
  });

  it("should_run_epoch_auto_fire: LastEpochBlock 100, tempo 50 fires at 150, not 149", () => {
    const s = state({ lastEpochBlock: 100, tempo: 50, block: 120 });
    expect(counterShouldRunEpoch(s, 149)).toBe(false);
    expect(counterShouldRunEpoch(s, 150)).toBe(true);
  });

  it("reveal_uses_exact_equality_not_gte: no earlier block reaches the reveal epoch", () => {
    const s = state({ lastEpochBlock: 80, pendingEpochAt: 95, tempo: 20, block: 91 });
    const reveal = predictFirstRevealBlock(s, 1);
    const target = counterEpochAt(s, s.block + 1) + 1;
    let run = s;
    for (let b = s.block + 1; b < reveal; b++) {
      expect(counterEpochAt(run, b)).toBeLessThan(target);
      run = counterRunBlock(run, b);
    }
    expect(counterEpochAt(run, reveal)).toBe(target);
  });
});

describe("the counter model", () => {
  it("fires every `tempo` blocks (not tempo + 1 like the spec-393 formula)", () => {
    let s = state({ tempo: 10, lastEpochBlock: 5, block: 5 });
    const fired: number[] = [];
    for (let b = 6; b <= 40; b++) {
      const before = s.epochIndex;
      s = counterRunBlock(s, b);
      if (s.epochIndex > before) fired.push(b);
    }
    expect(fired).toEqual([15, 25, 35]);
    expect(s).toMatchObject({ epochIndex: 3, lastEpochBlock: 35, blocksSinceLastStep: 5 });
    // The formula's period is tempo + 1: over ~130k blocks the two drift apart by an epoch.
    const formula = (b: number) => epochIndex(1, 360, b);
    const drift = (blocks: number) => Math.floor(blocks / 360) - (formula(blocks) - formula(0));
    expect(drift(130_000)).toBe(1);
  });

  it("keys a commit by the counter, plus one in the block whose epoch fires", () => {
    const s = state({ tempo: 10, lastEpochBlock: 100, epochIndex: 7, block: 105 });
    expect(counterEpochAt(s, 106)).toBe(7);
    const before = counterAdvanceTo(s, 109);
    expect(counterEpochAt(before, 110)).toBe(8); // 110 fires: its commits go to 8
    const after = counterRunBlock(before, 110);
    expect(after).toMatchObject({ epochIndex: 8, lastEpochBlock: 110, pendingEpochAt: 0 });
    expect(counterEpochAt(after, 111)).toBe(8);
    expect(counterFirstBlockOfEpoch(s, 8)).toBe(110);
    expect(counterFirstBlockOfEpoch(s, 9)).toBe(120);
  });

  it("fires early at PendingEpochAt (a trigger or a deferral) and restarts the cycle there", () => {
    // A deferral by the per-block cap sets PendingEpochAt to the next block and leaves the counter.
    const deferred = state({ tempo: 10, lastEpochBlock: 100, epochIndex: 3, block: 110 });
    const d = { ...deferred, pendingEpochAt: 111 };
    expect(counterEpochAt(d, 111)).toBe(4);
    const ran = counterRunBlock(d, 111);
    expect(ran).toMatchObject({ epochIndex: 4, lastEpochBlock: 111, pendingEpochAt: 0 });
    expect(counterFirstBlockOfEpoch(ran, 5)).toBe(121);
    // An owner trigger: due at 104, long before LastEpochBlock + tempo.
    const triggered = state({ tempo: 100, lastEpochBlock: 100, pendingEpochAt: 104, block: 101 });
    expect(predictFirstRevealBlock(triggered, 1)).toBe(104);
    expect(predictFirstRevealBlock(triggered, 2)).toBe(204);
  });

  it("a skipped epoch still advances the counter; past MAX_TEMPO blocks without a step it runs every block", () => {
    // Skipped (inconsistent inputs): the slot is consumed and LastEpochBlock moves, but
    // BlocksSinceLastStep is not reset. The model reads it from the chain and honours it.
    const starved = state({ tempo: 10, lastEpochBlock: 100, blocksSinceLastStep: MAX_TEMPO + 1 });
    const s = { ...starved, block: 101 };
    expect(counterShouldRunEpoch(s, 102)).toBe(true);
    expect(counterEpochAt(s, 102)).toBe(1);
    expect(counterFirstBlockOfEpoch(s, 1)).toBe(102);
  });

  it("bounds its simulation and refuses tempo 0", () => {
    expect(counterFirstBlockOfEpoch(state({ tempo: 0 }), 1)).toBeUndefined();
    expect(counterFirstBlockOfEpoch(state({ tempo: 10 }), 1_000_000, 100)).toBeUndefined();
  });
});
