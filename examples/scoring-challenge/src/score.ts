/**
 * From what the harness measured to a status and a score. The harness never reports a score;
 * the service computes it here, from the harness's own measurements only:
 *
 *   stream_bpb  = Σ nll_nats / (ln 2 · covered_bytes)      (prequential bits per byte)
 *   holdout_bpb = the same over the holdout, which the scorer evaluates beside each batch
 *   bpb         = max(stream_bpb, holdout_bpb − tolerance)   (the memorisation gap)
 *   final_score = anti_cheat_multiplier / (1 + bpb)
 *
 * The memorisation gap: the stream and the holdout are two samples of the pool drawn alike for
 * the epoch (scored-bytes.ts); the bundle sees the stream (after each charge), never the holdout.
 * An honest model predicts both alike, up to sampling noise; a bundle that carries the stream's
 * bytes (leaked from an earlier run of the epoch) predicts the stream far better. Past the
 * tolerance, three standard errors of the difference between the two samples, the score counts
 * the holdout: carrying the stream earns no more than the model's prediction of text it has not
 * seen, within that tolerance.
 *
 * Anti-cheat: a first-batch loss below ½·ln(vocab) under forced random init means the model
 * knew the data before seeing it (smuggled weights): multiplier 0. A model whose earlier
 * predictions move when later bytes change looks ahead: rejected. No coverage, a non-finite or
 * non-positive bpb: failed. A run that stopped for the harness's own reasons (its corpus, its
 * protocol) is the platform's failure, never the miner's: `infrastructure`, to be retried.
 */
import { HARNESS_VERSION, type RunReport } from "./harness-report.js";

/** The run configuration the service sent (run.json), to check the report's echoes against. */
export interface RunSettings {
  vocab_size: number;
  sequence_length: number;
  batch_size: number;
  token_budget: number;
  step_budget: number;
  stream_sha256: string;
  /** Bytes in stream.bin. */
  stream_bytes: number;
}

/** Scoring policy knobs. */
export interface ScoreOptions {
  /**
   * Least share of a full pass's bytes a run must score (default 0.9). A run that stops early
   * is scored on a shorter prefix of a public stream, where a miner could leave out the hard
   * part; 0.9 leaves room for a shorter seq_len, whose rows overlap more.
   */
  minCoverage?: number;
  /**
   * How far (bits per byte) the holdout may trail the stream before the score counts the
   * holdout; default: memorisationTolerance of the two samples' sizes.
   */
  memorisationToleranceBpb?: number;
}

/**
 * The spread (standard deviation, bits per byte) of one row's cost between rows of the pool, for
 * the small models these budgets train: 0.44 for a smoothed bigram model fitted on 1,032 rows of
 * the pinned corpus and measured on 1,032 others (docs/challenges/scoring.md), rounded up.
 */
export const ROW_SPREAD_BPB = 0.6;
/** Standard errors of the stream–holdout difference an honest run may show before it counts. */
export const GAP_STANDARD_ERRORS = 3;

/**
 * The tolerance of the memorisation gap for samples of `streamRows` and `holdoutRows` rows:
 * GAP_STANDARD_ERRORS standard errors of the difference of their means: 0.097 bits per byte at
 * the defaults (1,032 and 516 rows), 0.22 for two samples of 16 KiB.
 */
export function memorisationTolerance(streamRows: number, holdoutRows: number): number {
  return GAP_STANDARD_ERRORS * ROW_SPREAD_BPB * Math.sqrt(1 / streamRows + 1 / holdoutRows);
}

/** What a run comes to. */
export type ScoreOutcome =
  | {
      status: "completed";
      bpb: number;
      antiCheatMultiplier: number;
      finalScore: number;
      /** Why the multiplier is below 1, for the submission's record; null when it is 1. */
      note: string | null;
    }
  | { status: "failed" | "rejected"; error: string; bpb: number | null }
  | { status: "infrastructure"; error: string };

/** The look-ahead finding, word for word (miners and docs quote it). */
export const LOOKAHEAD_ERROR =
  "the model looks ahead: predictions at earlier positions changed when later bytes changed";

/** Bits per byte: Σ nll (nats) / (ln 2 · bytes). One division, so a uniform model is exactly 8. */
export function bitsPerByte(nllNats: number, coveredBytes: number): number {
  return nllNats / (Math.LN2 * coveredBytes);
}

/** final_score = multiplier / (1 + bpb). */
export function finalScore(bpb: number, multiplier: number): number {
  return multiplier / (1 + bpb);
}

/** The first-batch loss (mean nats per token) below which random init cannot explain it. */
export function stepZeroThreshold(vocabSize: number): number {
  return 0.5 * Math.log(vocabSize);
}

/**
 * Bytes a full pass with the default batch and row length scores: rows of T bytes overlap by
 * one, so each scores T-1; rows are limited by the stream, the token budget and the step budget.
 */
export function fullPassBytes(run: RunSettings): number {
  const t = run.sequence_length;
  const byStream = Math.max(0, Math.floor((run.stream_bytes - 1) / (t - 1)));
  const byTokens = Math.floor(run.token_budget / t);
  const bySteps = run.step_budget * run.batch_size;
  return Math.min(byStream, byTokens, bySteps) * (t - 1);
}

/** The outcome of a run `report` made under `run`. */
export function scoreRun(
  report: RunReport,
  run: RunSettings,
  options: ScoreOptions = {},
): ScoreOutcome {
  // The harness's own failures first: none of them is the bundle's doing.
  if (report.harness_version !== HARNESS_VERSION) {
    return infrastructure(
      `the harness speaks protocol ${report.harness_version}, the service ${HARNESS_VERSION}`,
    );
  }
  if (report.error?.stage === "corpus")
    return infrastructure(`the harness could not read its corpus: ${report.error.message}`);
  if (report.error?.stage === "harness")
    return infrastructure(`the harness failed: ${report.error.message}`);
  const echoes: [string, unknown, unknown][] = [
    ["vocab_size", report.vocab_size, run.vocab_size],
    ["sequence_length", report.sequence_length, run.sequence_length],
    ["batch_size", report.batch_size, run.batch_size],
    ["stream_sha256", report.stream_sha256, run.stream_sha256],
  ];
  for (const [field, got, sent] of echoes) {
    if (got !== sent)
      return infrastructure(
        `the harness ran with ${field} ${String(got)}, the service sent ${String(sent)}`,
      );
  }

  // A look-ahead is a cheat whatever else happened: the scorer stops the run at the first one.
  if (!report.causality.ok) return { status: "rejected", error: LOOKAHEAD_ERROR, bpb: null };
  if (!report.ok || report.error) {
    const error = report.error ?? { stage: "train", message: "the run did not finish" };
    return { status: "failed", error: `${error.stage}: ${error.message}`, bpb: null };
  }

  if (report.covered_bytes === 0) {
    return {
      status: "failed",
      error: "the run scored no bytes: train(ctx) never drew a batch from ctx.iter_train_batches",
      bpb: null,
    };
  }
  const full = fullPassBytes(run);
  const minCoverage = options.minCoverage ?? 0.9;
  if (full > 0 && report.covered_bytes < minCoverage * full) {
    return {
      status: "failed",
      error:
        `the run scored ${report.covered_bytes} of the ${full} bytes a full pass scores ` +
        `(${((100 * report.covered_bytes) / full).toFixed(1)}%, at least ${Math.round(minCoverage * 100)}% needed): ` +
        "train(ctx) must draw ctx.iter_train_batches to the end",
      bpb: null,
    };
  }
  if (report.nll_nats === null || !Number.isFinite(report.nll_nats)) {
    return { status: "failed", error: "the run's total loss is not a finite number", bpb: null };
  }
  const streamBpb = bitsPerByte(report.nll_nats, report.covered_bytes);
  if (!Number.isFinite(streamBpb) || streamBpb <= 0) {
    return {
      status: "failed",
      error: `bits per byte came out as ${streamBpb}, which no honest run produces`,
      bpb: null,
    };
  }
  const gap = memorisationGap(report, streamBpb, options);
  if (gap.status === "infrastructure") return gap;
  const { bpb } = gap;

  let multiplier = 1;
  let note: string | null = gap.note;
  const threshold = stepZeroThreshold(run.vocab_size);
  const first = report.first_batch_loss;
  if (first === null || !Number.isFinite(first)) {
    return { status: "failed", error: "the run reported no finite first-batch loss", bpb };
  }
  if (first < threshold) {
    multiplier = 0;
    note =
      (note ? `${note}; ` : "") +
      `step-0 anomaly: the first batch cost ${first.toFixed(3)} nats per token under forced random ` +
      `initialisation, below ½·ln(${run.vocab_size}) = ${threshold.toFixed(3)}: ` +
      "the model knew the data before training (smuggled weights), anti-cheat multiplier 0";
  }
  return {
    status: "completed",
    bpb,
    antiCheatMultiplier: multiplier,
    finalScore: finalScore(bpb, multiplier),
    note,
  };
}

/** The bpb the score counts: the stream's, or the holdout's less the tolerance when that is more. */
function memorisationGap(
  report: RunReport,
  streamBpb: number,
  options: ScoreOptions,
):
  | { status: "ok"; bpb: number; note: string | null }
  | { status: "infrastructure"; error: string } {
  const { covered_bytes: covered, nll_nats: nll } = report.holdout;
  // The scorer evaluates holdout rows beside every batch and the rest at the end: a finished run
  // without them is the harness's fault, and scoring it without the check would be a way round it.
  if (covered === 0 || nll === null || !Number.isFinite(nll)) {
    return {
      status: "infrastructure",
      error: "the harness reported no holdout for a finished run",
    };
  }
  const holdoutBpb = bitsPerByte(nll, covered);
  const targets = Math.max(1, (report.sequence_length ?? 2) - 1);
  const tolerance =
    options.memorisationToleranceBpb ??
    memorisationTolerance(report.covered_bytes / targets, covered / targets);
  if (holdoutBpb - tolerance <= streamBpb) return { status: "ok", bpb: streamBpb, note: null };
  const bpb = holdoutBpb - tolerance;
  return {
    status: "ok",
    bpb,
    note:
      `memorisation gap: the stream cost ${streamBpb.toFixed(3)} bits per byte but text the model ` +
      `had not seen ${holdoutBpb.toFixed(3)}, more than ${tolerance.toFixed(3)} apart: scored at ` +
      `${bpb.toFixed(3)} (the holdout less the tolerance)`,
  };
}

function infrastructure(error: string): ScoreOutcome {
  return { status: "infrastructure", error };
}
