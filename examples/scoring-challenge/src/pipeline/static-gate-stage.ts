/**
 * The static gates and the contract, in the evaluation image: `python3 /opt/harness/gate.py`
 * parses every .py file with python3's own `ast` (no bundle code runs) and reports each
 * forbidden import, name, attribute and call, and a missing `build_model(ctx)` or `train(ctx)`.
 * A report is only ever read from the line carrying this run's nonce.
 */
import type { Bundle } from "../bundle/index.js";
import { type GateReport, newHarnessNonce, parseGateReport } from "../harness-report.js";
import { gateTask } from "../harness-task.js";
import { InfrastructureError, infrastructureFromTask } from "./infrastructure-error.js";
import type { PipelineDeps } from "./pipeline-context.js";

/** What the gates found: passed, or refused with a sentence naming each construct. */
export type StaticGateOutcome =
  | { ok: true; report: GateReport }
  | { ok: false; report: GateReport; message: string };

// The miner reads the first few findings; the audit trail keeps all of them.
const SHOWN_VIOLATIONS = 5;

/** Run gate.py over `bundle` in a container. Throws InfrastructureError when it could not run. */
export async function staticGateStage(
  deps: Pick<PipelineDeps, "runner" | "options">,
  id: string,
  bundle: Bundle,
  signal: AbortSignal,
): Promise<StaticGateOutcome> {
  const nonce = newHarnessNonce();
  let result: Awaited<ReturnType<PipelineDeps["runner"]["run"]>>;
  try {
    result = await deps.runner.run(
      gateTask({ jobId: `scoring-${id}-gate`, image: deps.options.image, bundle, nonce }),
      { signal },
    );
  } catch (error) {
    throw infrastructureFromTask(error) ?? error;
  }
  const parsed = parseGateReport(result.stdout, nonce, { truncated: result.stdoutTruncated });
  // gate.py runs no bundle code: whatever stops it from reporting is the platform's problem.
  if (!parsed.ok) {
    throw new InfrastructureError(
      "harness_error",
      `gate.py gave no usable report (exit ${result.exitCode}${result.timedOut ? ", timed out" : ""}): ${parsed.error.message}`,
    );
  }
  const report = parsed.report;
  if (report.ok && report.violations.length === 0) return { ok: true, report };
  return { ok: false, report, message: gateMessage(report) };
}

/** The miner's sentence: the first findings, each with where it is. */
export function gateMessage(report: GateReport): string {
  if (report.violations.length === 0) return "static gate: the bundle was refused";
  const contract = report.violations.every(
    (v) => v.code.startsWith("contract_") || v.code === "syntax_error",
  );
  const shown = report.violations.slice(0, SHOWN_VIOLATIONS).map((violation) => {
    const where = violation.line ? `${violation.path}:${violation.line}` : violation.path;
    return `${violation.message} (${where})`;
  });
  const more = report.violations.length - shown.length;
  return (
    `${contract ? "contract" : "static gate"}: ${shown.join("; ")}` +
    (more > 0 ? ` (and ${more} more)` : "")
  );
}
