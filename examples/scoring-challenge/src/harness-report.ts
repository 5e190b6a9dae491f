/**
 * The evaluation harness's reports (docs/challenges/scoring.md, protocol "2"): one framed line
 * `HARNESS-REPORT <nonce> <compact json>` on stdout. Only the scorer writes to that stdout (the
 * bundle's process has the container's stderr and no way to the scorer's descriptors), and only
 * the LAST line carrying this run's nonce counts; everything else is the miner's log, never
 * trusted. The harness writes JSON without NaN or Infinity (non-finite floats become null), so
 * every float here may be null.
 */
import { randomBytes } from "node:crypto";
import { type Static, type TSchema, Type } from "@platform/challenge-sdk";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { Value } from "@sinclair/typebox/value";

/** The first word of a report line. */
export const REPORT_PREFIX = "HARNESS-REPORT";
/** The protocol version run.py reports as `harness_version` (2: the scorer in its own process). */
export const HARNESS_VERSION = "2";

const Float = Type.Union([Type.Number(), Type.Null()]);
const Count = Type.Integer({ minimum: 0 });

/** One static-gate finding (`python3 /opt/harness/gate.py`). */
export const GateViolation = Type.Object({
  code: Type.String(),
  path: Type.String(),
  line: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
  message: Type.String(),
});

/** The gate command's report: static gates and the contract, no bundle code executed. */
export const GateReport = Type.Object({
  ok: Type.Boolean(),
  files: Count,
  violations: Type.Array(GateViolation),
});
export type GateReport = Static<typeof GateReport>;

/**
 * Where a scored run stopped: the bundle's stages (`import`, `build_model`, `train`, `graph`: the
 * scorer could not evaluate the model's traced forward, `budget`), or the harness's own (`corpus`,
 * `harness`), which are never the bundle's doing.
 */
export const RunStage = Type.Union([
  Type.Literal("import"),
  Type.Literal("build_model"),
  Type.Literal("train"),
  Type.Literal("graph"),
  Type.Literal("budget"),
  Type.Literal("corpus"),
  Type.Literal("harness"),
]);
export type RunStage = Static<typeof RunStage>;

/**
 * The behaviour signature (eval-image/harness/harness_behaviour.py): the charged losses cut into
 * at most 64 equal spans of predicted bytes (`bucket_bytes` each, the last one shorter), as mean
 * nats per byte, in stream order.
 */
export const BehaviourSignature = Type.Object({
  bucket_bytes: Type.Integer({ minimum: 1 }),
  losses: Type.Array(Float, { maxItems: 64 }),
});
export type BehaviourSignature = Static<typeof BehaviourSignature>;

/** The run command's report: what the harness measured. It never reports a score. */
export const RunReport = Type.Object({
  ok: Type.Boolean(),
  error: Type.Union([Type.Object({ stage: RunStage, message: Type.String() }), Type.Null()]),
  harness_version: Type.String(),
  // Echoes of run.json: null only when run.json itself could not be read.
  stream_sha256: Type.Union([Type.String(), Type.Null()]),
  vocab_size: Type.Union([Type.Integer(), Type.Null()]),
  sequence_length: Type.Union([Type.Integer(), Type.Null()]),
  batch_size: Type.Union([Type.Integer(), Type.Null()]),
  batches: Count,
  tokens: Count,
  covered_bytes: Count,
  nll_nats: Float,
  first_batch_loss: Float,
  nonfinite_batches: Count,
  param_count: Count,
  steps: Count,
  // Every charged row checked against a twin with a secret cut (eval-image/harness/harness_causality.py).
  causality: Type.Object({
    ok: Type.Boolean(),
    max_delta: Float,
    checked_positions: Count,
    checked_rows: Count,
  }),
  holdout: Type.Object({ covered_bytes: Count, nll_nats: Float }),
  device: Type.Union([Type.Literal("cpu"), Type.Literal("cuda")]),
  seconds: Float,
  // The bundle's process's peak resident memory, measured by the scorer (absent: it never ran).
  peak_memory_mb: Type.Optional(Float),
  // What the model computed, for the copy check (behaviour-signature.ts); absent from the reports
  // of harnesses before it, which are still read.
  behaviour: Type.Optional(BehaviourSignature),
});
export type RunReport = Static<typeof RunReport>;

/** Either report: what `parseHarnessReport` accepts when not told which command ran. */
export const HarnessReport = Type.Union([RunReport, GateReport]);
export type HarnessReport = Static<typeof HarnessReport>;

/** Why no report could be taken from a run's stdout. */
export interface ReportError {
  code: "report_missing" | "report_malformed";
  message: string;
}

/** A report, or why there is none. */
export type ReportResult<T> = { ok: true; report: T } | { ok: false; error: ReportError };

/** A fresh nonce for one harness run (the harness accepts 8-256 of [A-Za-z0-9_-]). */
export function newHarnessNonce(): string {
  return randomBytes(24).toString("base64url");
}

const compiled = new Map<TSchema, ReturnType<typeof TypeCompiler.Compile>>();

/**
 * The report framed with `nonce` in `stdout`, validated against `schema`. The last line carrying
 * the nonce wins; lines with another nonce or none are ignored. `truncated` (the runner cut
 * stdout at its cap) only changes the message of a missing report.
 */
export function parseHarnessReport<S extends TSchema = typeof HarnessReport>(
  stdout: string,
  nonce: string,
  schema: S = HarnessReport as unknown as S,
  options: { truncated?: boolean } = {},
): ReportResult<Static<S>> {
  const marker = `${REPORT_PREFIX} ${nonce} `;
  let line: string | undefined;
  for (const candidate of stdout.split("\n").reverse()) {
    const clean = candidate.endsWith("\r") ? candidate.slice(0, -1) : candidate;
    if (clean.startsWith(marker)) {
      line = clean;
      break;
    }
  }
  if (line === undefined) {
    return {
      ok: false,
      error: {
        code: "report_missing",
        message: options.truncated
          ? "the harness printed no report before its output was cut at the size limit"
          : "the harness printed no report (it crashed, was killed or ran out of memory)",
      },
    };
  }
  let value: unknown;
  try {
    value = JSON.parse(line.slice(marker.length));
  } catch (error) {
    return malformed(`its JSON does not parse (${(error as Error).message})`);
  }
  let check = compiled.get(schema);
  if (!check) {
    check = TypeCompiler.Compile(schema);
    compiled.set(schema, check);
  }
  if (!check.Check(value)) {
    const problems = [...check.Errors(value)]
      .slice(0, 3)
      .map((e) => `${e.path || "/"}: ${e.message}`);
    return malformed(problems.join("; "));
  }
  // Only the schema's fields are kept: whatever else the line carries (a field a later harness
  // adds, or one nested too deep to serialise again) is never stored or read.
  return { ok: true, report: Value.Clean(schema, value) as Static<S> };
}

/** The gate command's report in `stdout`. */
export function parseGateReport(
  stdout: string,
  nonce: string,
  options: { truncated?: boolean } = {},
) {
  return parseHarnessReport(stdout, nonce, GateReport, options);
}

/** The run command's report in `stdout`. */
export function parseRunReport(
  stdout: string,
  nonce: string,
  options: { truncated?: boolean } = {},
) {
  return parseHarnessReport(stdout, nonce, RunReport, options);
}

function malformed(detail: string): { ok: false; error: ReportError } {
  return {
    ok: false,
    error: { code: "report_malformed", message: `the harness report is malformed: ${detail}` },
  };
}
