/**
 * The records of the replay-audit routes (docs: "Replay audits"): the sampled runs a validator
 * replays and the comparison stored from its replay.
 */
import { Type } from "@platform/challenge-sdk";
import {
  ClosedRecord,
  Fraction,
  MintedId,
  NamedRecord,
  Sha256Hex,
  TaskId,
  Timestamp,
} from "../schema-primitives.js";
import { EvalTaskResult } from "./eval-result-schemas.js";
import { EvalPlan } from "./eval-schemas.js";

/** One accepted, fully attested run as a validator replays it. */
export const ReplayAuditRequestResponse = NamedRecord("ReplayAuditRequestResponse", {
  run_id: MintedId,
  submission_id: Type.Integer({ minimum: 1 }),
  // Whether the sampler selected it (the list shows only selected runs).
  selected: Type.Boolean(),
  plan: EvalPlan,
  plan_digest: Sha256Hex,
  agent_sha256: Sha256Hex,
  attested_score: Fraction,
  attested_tasks: Type.Array(EvalTaskResult),
  // The run's instance seed (its sha256 is the plan's task_set.instance_seed_sha256): a replay
  // draws the run's exact instances from it. Accepted runs only; never on a public route.
  instance_seed: Type.String({ pattern: "^[0-9a-f]{64}$" }),
  accepted_at: Timestamp,
});

/** The sampler's selection: round(rate x population) runs. */
export const ReplayAuditRequestListResponse = NamedRecord("ReplayAuditRequestListResponse", {
  rate: Fraction,
  population: Type.Integer({ minimum: 0 }),
  requests: Type.Array(ReplayAuditRequestResponse),
});

/** A validator's replay of one run: its audit id and the replayed trial scores. */
export const ReplayAuditResultRequest = NamedRecord("ReplayAuditResultRequest", {
  audit_id: MintedId,
  tasks: Type.Array(
    ClosedRecord({
      task_id: TaskId,
      trial_scores: Type.Array(Fraction, {
        minItems: 1,
        maxItems: 16,
      }),
    }),
    { maxItems: 256 },
  ),
});

/** The stored comparison: never a change to the accepted score or the weights. */
export const ReplayAuditResultResponse = NamedRecord("ReplayAuditResultResponse", {
  run_id: MintedId,
  audit_id: MintedId,
  attested_score: Fraction,
  replay_score: Fraction,
  delta: Fraction,
  tolerance: Fraction,
  exceeds_tolerance: Type.Boolean(),
  recorded_at: Timestamp,
});

/** The records /openapi.json names, in its order (challenge.ts lists each feature's). */
export const REPLAY_AUDIT_RECORDS = {
  ReplayAuditRequestResponse,
  ReplayAuditRequestListResponse,
  ReplayAuditResultRequest,
  ReplayAuditResultResponse,
};
