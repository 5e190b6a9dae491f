/**
 * The records of the replay-audit routes (docs: "Replay audits"): the sampled runs a validator
 * replays and the comparison stored from its replay.
 */
import { Type } from "@platform/challenge-sdk";
import { MintedId, Sha256Hex, TaskId, Timestamp } from "../schema-primitives.js";
import { EvalTaskResult } from "./eval-result-schemas.js";
import { EvalPlan } from "./eval-schemas.js";

/** One accepted, fully attested run as a validator replays it. */
export const ReplayAuditRequestResponse = Type.Object(
  {
    run_id: MintedId,
    submission_id: Type.Integer({ minimum: 1 }),
    // Whether the sampler selected it (the list shows only selected runs).
    selected: Type.Boolean(),
    plan: EvalPlan,
    plan_digest: Sha256Hex,
    agent_sha256: Sha256Hex,
    attested_score: Type.Number({ minimum: 0, maximum: 1 }),
    attested_tasks: Type.Array(EvalTaskResult),
    accepted_at: Timestamp,
  },
  { additionalProperties: false, title: "ReplayAuditRequestResponse" },
);

/** The sampler's selection: round(rate x population) runs. */
export const ReplayAuditRequestListResponse = Type.Object(
  {
    rate: Type.Number({ minimum: 0, maximum: 1 }),
    population: Type.Integer({ minimum: 0 }),
    requests: Type.Array(ReplayAuditRequestResponse),
  },
  { additionalProperties: false, title: "ReplayAuditRequestListResponse" },
);

/** A validator's replay of one run: its audit id and the replayed trial scores. */
export const ReplayAuditResultRequest = Type.Object(
  {
    audit_id: MintedId,
    tasks: Type.Array(
      Type.Object(
        {
          task_id: TaskId,
          trial_scores: Type.Array(Type.Number({ minimum: 0, maximum: 1 }), {
            minItems: 1,
            maxItems: 16,
          }),
        },
        { additionalProperties: false },
      ),
      { maxItems: 256 },
    ),
  },
  { additionalProperties: false, title: "ReplayAuditResultRequest" },
);

/** The stored comparison: never a change to the accepted score or the weights. */
export const ReplayAuditResultResponse = Type.Object(
  {
    run_id: MintedId,
    audit_id: MintedId,
    attested_score: Type.Number({ minimum: 0, maximum: 1 }),
    replay_score: Type.Number({ minimum: 0, maximum: 1 }),
    delta: Type.Number({ minimum: 0, maximum: 1 }),
    tolerance: Type.Number({ minimum: 0, maximum: 1 }),
    exceeds_tolerance: Type.Boolean(),
    recorded_at: Timestamp,
  },
  { additionalProperties: false, title: "ReplayAuditResultResponse" },
);
