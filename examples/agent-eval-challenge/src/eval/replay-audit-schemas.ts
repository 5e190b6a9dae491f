/**
 * The records of the replay-audit routes (docs: "Replay audits"): the sampled runs a validator
 * replays and the comparison stored from its replay.
 */
import { Type } from "@platform/challenge-sdk";
import { Fraction, MintedId, Sha256Hex, TaskId, Timestamp } from "../schema-primitives.js";
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
    attested_score: Fraction,
    attested_tasks: Type.Array(EvalTaskResult),
    accepted_at: Timestamp,
  },
  { additionalProperties: false, title: "ReplayAuditRequestResponse" },
);

/** The sampler's selection: round(rate x population) runs. */
export const ReplayAuditRequestListResponse = Type.Object(
  {
    rate: Fraction,
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
          trial_scores: Type.Array(Fraction, {
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
    attested_score: Fraction,
    replay_score: Fraction,
    delta: Fraction,
    tolerance: Fraction,
    exceeds_tolerance: Type.Boolean(),
    recorded_at: Timestamp,
  },
  { additionalProperties: false, title: "ReplayAuditResultResponse" },
);
