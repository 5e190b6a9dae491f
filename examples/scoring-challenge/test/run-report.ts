import type { RunReport } from "../src/harness-report.js";

/**
 * A complete, successful run report (what run.py prints), with `patch` applied. Unless the patch
 * says otherwise, the holdout costs what the stream costs per byte (an honest model's report).
 */
export function runReport(patch: Partial<RunReport> = {}): RunReport {
  const covered = patch.covered_bytes ?? 10160;
  const nll = patch.nll_nats === undefined ? covered * Math.log(256) : patch.nll_nats;
  const perByte = nll !== null && covered > 0 ? nll / covered : Math.log(256);
  return {
    ok: true,
    error: null,
    harness_version: "2",
    stream_sha256: "ab".repeat(32),
    vocab_size: 256,
    sequence_length: 128,
    batch_size: 8,
    batches: 10,
    tokens: 10240,
    covered_bytes: 10160,
    nll_nats: 10160 * Math.log(256),
    first_batch_loss: Math.log(256),
    nonfinite_batches: 0,
    param_count: 1000,
    steps: 10,
    causality: { ok: true, max_delta: 0, checked_positions: 12, checked_rows: 80 },
    holdout: { covered_bytes: 1016, nll_nats: 1016 * perByte },
    device: "cpu",
    seconds: 1.5,
    peak_memory_mb: 250,
    ...patch,
  };
}
