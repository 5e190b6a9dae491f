/**
 * The records of the eval VM's reads, telemetry session and progress routes (docs: "Telemetry
 * and progress"); the result's are in eval-result-schemas.ts.
 */
import { Type } from "@platform/challenge-sdk";
import {
  ClosedRecord,
  Literals,
  MintedId,
  NamedRecord,
  Sha256Hex,
  TaskId,
  Timestamp,
} from "../schema-primitives.js";
import { EvalPlan, EvalRunState } from "./eval-schemas.js";

/** GET /evaluation/v1/runs/{id}: the run as its VM reads it. */
export const EvalRunView = NamedRecord("EvalRunView", {
  run_id: MintedId,
  state: EvalRunState,
  plan: EvalPlan,
  plan_sha256: Sha256Hex,
});

/** GET /evaluation/v1/runs/{id}/env: the miner's env values, released to the run token only. */
export const EvalRunEnvResponse = NamedRecord("EvalRunEnvResponse", {
  run_id: MintedId,
  env: Type.Record(Type.String(), Type.String()),
});

/**
 * telemetry-session: a grant the submission's hotkey signed over telemetryGrantMessage (run, plan
 * digest, hotkey, nonce, timestamp). Never a mnemonic: the body has no room for one.
 */
export const TelemetrySessionRequest = NamedRecord("TelemetrySessionRequest", {
  hotkey_ss58: Type.String({ pattern: "^[1-9A-HJ-NP-Za-km-z]{46,48}$" }),
  signature: Type.String({ pattern: "^(0x)?[0-9a-fA-F]{128}$" }),
  nonce: Type.String({ pattern: "^[\\x21-\\x7e]{8,128}$" }),
  // Unix seconds, as the signed request headers carry them.
  timestamp: Type.String({ pattern: "^[0-9]{1,12}$" }),
});

export const TelemetrySessionResponse = NamedRecord("TelemetrySessionResponse", {
  run_id: MintedId,
  session_id: Type.String(),
  expires_at: Timestamp,
  state: EvalRunState,
});

const ProgressSeq = Type.Integer({ minimum: 1, maximum: 2147483647 });
const ProgressMessage = Type.String({ maxLength: 1024 });

/**
 * One progress event (rule 14: it never touches a score). Closed objects: a score-shaped field,
 * or any field not named here, is a 422.
 */
export const ProgressEvent = Type.Union(
  [
    ClosedRecord({
      type: Type.Literal("task.status"),
      task_id: TaskId,
      seq: ProgressSeq,
      status: Literals(["queued", "running", "finished", "failed"]),
      trial: Type.Optional(Type.Integer({ minimum: 1, maximum: 16 })),
      message: Type.Optional(ProgressMessage),
    }),
    ClosedRecord({
      type: Type.Literal("task.progress"),
      task_id: TaskId,
      seq: ProgressSeq,
      completed_trials: Type.Integer({ minimum: 0, maximum: 16 }),
      total_trials: Type.Integer({ minimum: 1, maximum: 16 }),
      message: Type.Optional(ProgressMessage),
    }),
  ],
  { title: "ProgressEvent" },
);

export const ProgressResponse = NamedRecord("ProgressResponse", {
  run_id: MintedId,
  task_id: TaskId,
  seq: ProgressSeq,
  // False for an identical repeat of an event already recorded (idempotent).
  recorded: Type.Boolean(),
  duplicate: Type.Boolean(),
});

/** The records /openapi.json names, in its order (challenge.ts lists each feature's). */
export const EVAL_VM_RECORDS = {
  EvalRunView,
  EvalRunEnvResponse,
  TelemetrySessionRequest,
  TelemetrySessionResponse,
  ProgressEvent,
  ProgressResponse,
};
