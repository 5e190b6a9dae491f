/**
 * What the eval worker measures into RTMR3 before it quotes, in this order: the evaluator, the
 * plan (its digest binds the run, the agent, the tasks and the trials), the task set the checkers
 * came from, the agent's bytes and the image the agents ran in. A verifier replays these events
 * to the quote's RTMR3, so a result says which evaluator judged which agent on which tasks.
 */
import { type EventLogEntry, measuredEvent } from "../attestation/index.js";

/** The runtime register the worker extends (RTMR3: the workload's, after boot). */
export const WORKLOAD_RTMR = 3;

export interface EvalMeasuredInputs {
  evaluator: { name: string; version: string };
  planDigest: string;
  taskSetRevisionId: string;
  agentSha256: string;
  agentImage: string;
}

/** The worker's RTMR3 events. */
export function evalEventLog(inputs: EvalMeasuredInputs): EventLogEntry[] {
  return [
    measuredEvent(
      WORKLOAD_RTMR,
      "evaluator-version",
      `${inputs.evaluator.name}@${inputs.evaluator.version}`,
    ),
    measuredEvent(WORKLOAD_RTMR, "eval-plan-digest", inputs.planDigest),
    measuredEvent(WORKLOAD_RTMR, "task-set-revision", inputs.taskSetRevisionId),
    measuredEvent(WORKLOAD_RTMR, "agent-sha256", inputs.agentSha256),
    measuredEvent(WORKLOAD_RTMR, "agent-image", inputs.agentImage),
  ];
}
