/**
 * What the eval worker measures into RTMR3 before it quotes, in this order: the evaluator, the
 * plan (its digest binds the run, the agent, the tasks and the trials), the task set the checkers
 * came from, the agent's bytes and the image the agents ran in. A verifier replays these events
 * to the quote's RTMR3, so a result says which evaluator judged which agent on which tasks.
 */
import { type EventLogEntry, workloadEvents } from "../attestation/index.js";

export interface EvalMeasuredInputs {
  evaluator: { name: string; version: string };
  planDigest: string;
  taskSetRevisionId: string;
  agentSha256: string;
  agentImage: string;
}

/** The worker's RTMR3 events. */
export function evalEventLog(inputs: EvalMeasuredInputs): EventLogEntry[] {
  return workloadEvents([
    ["evaluator-version", `${inputs.evaluator.name}@${inputs.evaluator.version}`],
    ["eval-plan-digest", inputs.planDigest],
    ["task-set-revision", inputs.taskSetRevisionId],
    ["agent-sha256", inputs.agentSha256],
    ["agent-image", inputs.agentImage],
  ]);
}
