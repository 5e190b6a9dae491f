import { describe, expect, it } from "vitest";
import { runReport } from "../test/run-report.js";
import {
  bitsPerByte,
  finalScore,
  fullPassBytes,
  LOOKAHEAD_ERROR,
  memorisationTolerance,
  type RunSettings,
  scoreRun,
  stepZeroThreshold,
} from "./score.js";

const run: RunSettings = {
  vocab_size: 256,
  sequence_length: 128,
  batch_size: 8,
  token_budget: 10240,
  step_budget: 1000,
  stream_sha256: "ab".repeat(32),
  stream_bytes: 10240,
};

describe("bits per byte and the final score", () => {
  it("gives a uniform model exactly 8 bits per byte and a score of exactly 1/9", () => {
    for (const bytes of [1, 127, 10160, 65_535, 1_048_575, 123_456_789]) {
      const nll = bytes * Math.log(256);
      expect(bitsPerByte(nll, bytes)).toBe(8);
      expect(finalScore(bitsPerByte(nll, bytes), 1)).toBe(1 / 9);
    }
    const outcome = scoreRun(runReport(), run);
    expect(outcome).toEqual({
      status: "completed",
      bpb: 8,
      antiCheatMultiplier: 1,
      finalScore: 1 / 9,
      note: null,
    });
  });

  it("follows the formula for a model with known probabilities", () => {
    // Every byte predicted with probability 1/4: 2 bits per byte; score 1/3.
    const bytes = 10160;
    const outcome = scoreRun(
      runReport({ nll_nats: bytes * Math.log(4), first_batch_loss: 5 }),
      run,
    );
    expect(outcome.status).toBe("completed");
    if (outcome.status !== "completed") return;
    expect(outcome.bpb).toBeCloseTo(2, 14);
    expect(outcome.finalScore).toBeCloseTo(1 / 3, 14);
  });

  it("ranks a lower bpb higher", () => {
    expect(finalScore(1.2, 1)).toBeGreaterThan(finalScore(1.3, 1));
  });
});

describe("anti-cheat", () => {
  it("zeroes the multiplier on a step-0 anomaly (first batch below ½·ln vocab), saying why", () => {
    const threshold = stepZeroThreshold(256);
    expect(threshold).toBeCloseTo(2.7726, 4);
    const cheat = scoreRun(runReport({ first_batch_loss: 1.9, nll_nats: 10160 * 1.5 }), run);
    expect(cheat).toMatchObject({ status: "completed", antiCheatMultiplier: 0, finalScore: 0 });
    if (cheat.status === "completed") {
      expect(cheat.note).toMatch(
        /^step-0 anomaly: the first batch cost 1\.900 nats per token .* below ½·ln\(256\) = 2\.773/,
      );
      expect(cheat.bpb).toBeCloseTo((10160 * 1.5) / Math.LN2 / 10160, 12);
    }
    // Just at the threshold is not an anomaly.
    expect(scoreRun(runReport({ first_batch_loss: threshold }), run)).toMatchObject({
      antiCheatMultiplier: 1,
    });
  });

  it("rejects a model that looks ahead, whatever its loss", () => {
    const outcome = scoreRun(
      runReport({
        causality: { ok: false, max_delta: 3.2, checked_positions: 12, checked_rows: 1 },
        nll_nats: 10,
      }),
      run,
    );
    expect(outcome).toEqual({ status: "rejected", error: LOOKAHEAD_ERROR, bpb: null });
    expect(LOOKAHEAD_ERROR).toMatch(/^the model looks ahead/);
  });
});

describe("the memorisation gap", () => {
  // 10160 stream bytes, 1016 holdout bytes (runReport's); nats for a given bpb.
  const nats = (bpb: number, bytes: number) => bpb * Math.LN2 * bytes;

  it("scores the stream when the holdout is predicted alike (an honest model)", () => {
    const outcome = scoreRun(
      runReport({
        nll_nats: nats(4, 10160),
        holdout: { covered_bytes: 1016, nll_nats: nats(4.3, 1016) },
      }),
      run,
    );
    expect(outcome).toMatchObject({ status: "completed", note: null });
    if (outcome.status !== "completed") throw new Error("not completed");
    expect(outcome.bpb).toBeCloseTo(4, 12);
  });

  it("scores the holdout less the tolerance when the stream was predicted from memory", () => {
    // The attack: the stream's bytes carried in the bundle (0.05 bits per byte), text it had
    // not seen at 4.6. Without the check it would score 1/1.05 = 0.95.
    const outcome = scoreRun(
      runReport({
        nll_nats: nats(0.05, 10160),
        holdout: { covered_bytes: 1016, nll_nats: nats(4.6, 1016) },
      }),
      run,
    );
    if (outcome.status !== "completed") throw new Error("not completed");
    // 80 stream rows and 8 holdout rows of 127 targets: the tolerance of samples that small.
    const tolerance = memorisationTolerance(80, 8);
    expect(tolerance).toBeCloseTo(3 * 0.6 * Math.sqrt(1 / 80 + 1 / 8), 12);
    expect(outcome.bpb).toBeCloseTo(4.6 - tolerance, 12);
    expect(outcome.finalScore).toBeCloseTo(1 / (1 + 4.6 - tolerance), 12);
    expect(outcome.note).toMatch(
      /^memorisation gap: the stream cost 0\.050 bits per byte but text the model had not seen 4\.600/,
    );
  });

  it("is about a tenth of a bit per byte at the default sample sizes", () => {
    expect(memorisationTolerance(1032, 516)).toBeCloseTo(0.097, 3);
  });

  it("takes the tolerance from the options, and a step-0 anomaly still zeroes the score", () => {
    const report = runReport({
      nll_nats: nats(3, 10160),
      first_batch_loss: 1,
      holdout: { covered_bytes: 1016, nll_nats: nats(3.4, 1016) },
    });
    const strict = scoreRun(report, run, { memorisationToleranceBpb: 0.1 });
    if (strict.status !== "completed") throw new Error("not completed");
    expect(strict.bpb).toBeCloseTo(3.3, 12);
    expect(strict.finalScore).toBe(0);
    expect(strict.note).toMatch(/^memorisation gap: .*; step-0 anomaly/);
  });

  it("never scores a finished run without a holdout: the harness's fault, retried", () => {
    for (const holdout of [
      { covered_bytes: 0, nll_nats: 0 },
      { covered_bytes: 1016, nll_nats: null },
    ]) {
      expect(scoreRun(runReport({ holdout }), run)).toMatchObject({ status: "infrastructure" });
    }
  });
});

describe("failures", () => {
  it.each([
    ["no coverage", { covered_bytes: 0, nll_nats: 0 }, /scored no bytes/],
    ["a non-finite loss", { nll_nats: null }, /not a finite number/],
    ["a zero loss", { nll_nats: 0 }, /came out as 0/],
    ["a negative loss", { nll_nats: -5 }, /came out as -/],
    ["no first-batch loss", { first_batch_loss: null }, /no finite first-batch loss/],
    [
      "a run that stopped early",
      { covered_bytes: 127 * 8, nll_nats: 127 * 8 * 3 },
      /scored 1016 of the 10160 bytes a full pass scores \(10\.0%, at least 90% needed\)/,
    ],
    [
      "a bundle error",
      {
        ok: false,
        error: { stage: "train" as const, message: "ZeroDivisionError: division by zero" },
      },
      /^train: ZeroDivisionError/,
    ],
    [
      "a model the scorer cannot evaluate",
      {
        ok: false,
        error: { stage: "graph" as const, message: "the model's forward uses aten::empty" },
      },
      /^graph: the model's forward uses aten::empty/,
    ],
    [
      // Only the harness's own stage is the platform's: a message that merely starts like one
      // (a bundle can raise any text) stays the bundle's failure.
      "a bundle error that imitates a harness fault",
      { ok: false, error: { stage: "train" as const, message: "harness: KeyError: 'x'" } },
      /^train: harness: KeyError/,
    ],
    [
      "a parameter cap",
      { ok: false, error: { stage: "budget" as const, message: "the model has 2e8 parameters" } },
      /^budget: /,
    ],
  ])("fails on %s, with a readable error", (_, patch, error) => {
    const outcome = scoreRun(runReport(patch), run);
    expect(outcome.status).toBe("failed");
    if (outcome.status === "failed") expect(outcome.error).toMatch(error);
  });

  it("lets the coverage rule be loosened", () => {
    const early = runReport({ covered_bytes: 127 * 8, nll_nats: 127 * 8 * 3 });
    expect(scoreRun(early, run, { minCoverage: 0 })).toMatchObject({ status: "completed" });
  });

  it("computes a full pass from the stream, the token budget and the step budget", () => {
    expect(fullPassBytes(run)).toBe(80 * 127);
    expect(fullPassBytes({ ...run, stream_bytes: 1000 })).toBe(7 * 127);
    expect(fullPassBytes({ ...run, step_budget: 2 })).toBe(16 * 127);
  });

  it.each([
    [
      "a corpus error",
      { ok: false, error: { stage: "corpus" as const, message: "stream.bin sha256 is 00" } },
      /could not read its corpus/,
    ],
    [
      "a harness fault",
      { ok: false, error: { stage: "harness" as const, message: "harness: KeyError: 'x'" } },
      /the harness failed/,
    ],
    [
      "another stream",
      { stream_sha256: "cd".repeat(32) },
      /stream_sha256 cdcd.*, the service sent abab/,
    ],
    ["another vocabulary", { vocab_size: 4096 }, /vocab_size 4096, the service sent 256/],
    ["another protocol", { harness_version: "1" }, /protocol 1/],
  ])("blames the platform, not the miner, for %s", (_, patch, error) => {
    const outcome = scoreRun(runReport(patch), run);
    expect(outcome.status).toBe("infrastructure");
    if (outcome.status === "infrastructure") expect(outcome.error).toMatch(error);
  });
});
