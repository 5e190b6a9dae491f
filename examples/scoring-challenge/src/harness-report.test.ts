import { describe, expect, it } from "vitest";
import { runReport } from "../test/run-report.js";
import {
  newHarnessNonce,
  parseGateReport,
  parseHarnessReport,
  parseRunReport,
} from "./harness-report.js";

const frame = (nonce: string, value: unknown) => `HARNESS-REPORT ${nonce} ${JSON.stringify(value)}`;

describe("harness reports", () => {
  const nonce = newHarnessNonce();

  it("makes nonces the harness accepts, never the same twice", () => {
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{8,256}$/);
    expect(newHarnessNonce()).not.toBe(nonce);
  });

  it("takes the last line carrying this run's nonce, ignoring the miner's log and forgeries", () => {
    const real = runReport({ covered_bytes: 5 });
    const stdout = [
      "loading...",
      frame(nonce, runReport({ covered_bytes: 1 })), // an earlier line with the nonce: superseded
      frame("forged-nonce-123", runReport({ covered_bytes: 999_999 })),
      `  ${frame(nonce, runReport({ covered_bytes: 2 }))}`, // not at the start of a line
      `${frame(nonce, real)}\r`,
      frame("another-nonce", runReport({ covered_bytes: 3 })),
      "",
    ].join("\n");
    const parsed = parseRunReport(stdout, nonce);
    expect(parsed).toEqual({ ok: true, report: real });
  });

  it("reads the marker only at a line's start: a later log line quoting a report is not one", () => {
    const real = runReport({ covered_bytes: 5 });
    const quoted = `bundle: saw HARNESS-REPORT ${nonce} ${JSON.stringify(runReport({ covered_bytes: 999_999 }))}`;
    expect(parseRunReport([frame(nonce, real), quoted, ""].join("\n"), nonce)).toEqual({
      ok: true,
      report: real,
    });
    // Quoted alone, it is no report at all (not a malformed one).
    expect(parseRunReport(`${quoted}\n`, nonce)).toMatchObject({
      ok: false,
      error: { code: "report_missing" },
    });
  });

  it("reads a gate report", () => {
    const report = {
      ok: false,
      files: 2,
      violations: [
        {
          code: "forbidden_import",
          path: "training.py",
          line: 3,
          message: "import of os is not allowed",
        },
      ],
    };
    expect(parseGateReport(`${frame(nonce, report)}\n`, nonce)).toEqual({ ok: true, report });
    // Without a schema, either report is accepted (and nothing else).
    expect(parseHarnessReport(frame(nonce, report), nonce)).toEqual({ ok: true, report });
    expect(parseHarnessReport(frame(nonce, runReport()), nonce)).toEqual({
      ok: true,
      report: runReport(),
    });
    expect(parseHarnessReport(frame(nonce, { ok: true }), nonce)).toMatchObject({
      ok: false,
      error: { code: "report_malformed" },
    });
  });

  it("says when there is no report, and why it may be", () => {
    expect(parseRunReport(frame("other-nonce-1", runReport()), nonce)).toEqual({
      ok: false,
      error: {
        code: "report_missing",
        message: expect.stringContaining("printed no report (it crashed"),
      },
    });
    expect(parseRunReport("x".repeat(100), nonce, { truncated: true })).toMatchObject({
      error: { code: "report_missing", message: expect.stringContaining("cut at the size limit") },
    });
  });

  it("refuses a report that does not parse or does not match the protocol, naming the field", () => {
    expect(parseRunReport(`HARNESS-REPORT ${nonce} {"ok": tru`, nonce)).toMatchObject({
      error: { code: "report_malformed", message: expect.stringContaining("does not parse") },
    });
    // Python's json would write NaN without allow_nan=False: not JSON, so not a report.
    expect(parseRunReport(`HARNESS-REPORT ${nonce} {"nll_nats": NaN}`, nonce)).toMatchObject({
      error: { code: "report_malformed" },
    });
    const { covered_bytes: _, ...missing } = runReport();
    expect(parseRunReport(frame(nonce, missing), nonce)).toMatchObject({
      error: { code: "report_malformed", message: expect.stringContaining("/covered_bytes") },
    });
    expect(
      parseRunReport(frame(nonce, runReport({ device: "tpu" as "cpu" })), nonce),
    ).toMatchObject({
      error: { code: "report_malformed", message: expect.stringContaining("/device") },
    });
    expect(
      parseGateReport(frame(nonce, { ok: "yes", files: 1, violations: [] }), nonce),
    ).toMatchObject({
      error: { code: "report_malformed", message: expect.stringContaining("/ok") },
    });
  });

  it("reads the behaviour signature, and a report from a harness before it has none", () => {
    const behaviour = { bucket_bytes: 2032, losses: [5.25, 3.84, 3.43] };
    expect(parseRunReport(frame(nonce, runReport({ behaviour })), nonce)).toEqual({
      ok: true,
      report: runReport({ behaviour }),
    });
    const old = runReport();
    expect("behaviour" in old).toBe(false);
    expect(parseRunReport(frame(nonce, old), nonce)).toEqual({ ok: true, report: old });
    for (const bad of [
      { bucket_bytes: 0, losses: [1] },
      { bucket_bytes: 10, losses: Array.from({ length: 65 }, () => 1) },
      { bucket_bytes: 10, losses: ["1"] },
      { losses: [1] },
    ]) {
      expect(parseRunReport(frame(nonce, { ...runReport(), behaviour: bad }), nonce)).toMatchObject(
        {
          error: { code: "report_malformed", message: expect.stringContaining("/behaviour") },
        },
      );
    }
  });

  it("accepts the nulls the harness writes for non-finite floats and an unread run.json", () => {
    const failed = runReport({
      ok: false,
      error: { stage: "corpus", message: "run.json is unreadable" },
      stream_sha256: null,
      vocab_size: null,
      sequence_length: null,
      batch_size: null,
      nll_nats: null,
      first_batch_loss: null,
      causality: { ok: true, max_delta: null, checked_positions: 0, checked_rows: 0 },
    });
    expect(parseRunReport(frame(nonce, failed), nonce)).toEqual({ ok: true, report: failed });
  });
});
