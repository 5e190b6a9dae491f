/**
 * What the eval VM reads with its run token: the run and its immutable plan, and the miner's env
 * values, the one place they are ever opened: the key release to the run's VM, before its result
 * only. (The agent's exact ZIP is served as the review artifact is, by artifactResponse: hashed
 * again against the plan's agent_sha256 before a byte leaves.)
 */
import type { Sql, Static } from "@platform/challenge-sdk";
import { openMinerEnv } from "../env/miner-env.js";
import { reviewTransaction } from "../review/index.js";
import { PRE_RESULT_EVAL_RUN_STATES } from "../state/index.js";
import type { EvalRunView as EvalRunViewSchema } from "./eval-vm-schemas.js";
import { type AuthorizedRun, lockRun } from "./run-bearer.js";
import { runNotRunning } from "./telemetry-session.js";

export type EvalRunView = Static<typeof EvalRunViewSchema>;

/** The run its bearer opened, as the eval VM reads it. */
export function runView(run: AuthorizedRun): EvalRunView {
  return { run_id: run.id, state: run.state, plan: run.plan, plan_sha256: run.plan_sha256 };
}

/** The key release: locked, so a result cannot land between the check and the opening. */
export function runEnv(
  sql: Sql,
  input: { runId: string; secretKey: Buffer },
): Promise<{ run_id: string; env: Record<string, string> }> {
  return reviewTransaction(sql, undefined, async (tx) => {
    const run = await lockRun(tx, input.runId);
    if (!(PRE_RESULT_EVAL_RUN_STATES as readonly string[]).includes(run.state)) {
      throw runNotRunning(run, "its env is released only before its result.");
    }
    // A run exists only after launch, which needs an env set or confirmed empty.
    const env = await openMinerEnv(tx, run.submission_id, input.secretKey);
    if (env === null) throw new Error(`eval run ${run.id} has no env record`);
    return { run_id: run.id, env };
  });
}
