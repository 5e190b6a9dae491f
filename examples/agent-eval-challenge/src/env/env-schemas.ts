/**
 * The records of the miner's env and launch routes (docs: "Miner env and launch"), as TypeBox
 * schemas; the limits they check are env-rules.ts's.
 */
import { Type } from "@platform/challenge-sdk";
import { ClosedRecord, NamedRecord, Sha256Hex, Timestamp } from "../schema-primitives.js";
import { ENV_KEY_PATTERN, MAX_ENV_KEYS, MAX_ENV_VALUE_BYTES } from "./env-rules.js";

/** PUT env: the whole set, replacing the previous one. */
export const MinerEnvUpdateRequest = NamedRecord("MinerEnvUpdateRequest", {
  env: Type.Record(
    Type.String({ pattern: ENV_KEY_PATTERN }),
    Type.String({ maxLength: MAX_ENV_VALUE_BYTES }),
    { maxProperties: MAX_ENV_KEYS, additionalProperties: false },
  ),
});

/** What the env routes show: never a value. */
export const MinerEnvMetadataResponse = NamedRecord("MinerEnvMetadataResponse", {
  submission_id: Type.Integer({ minimum: 1 }),
  // unset: nothing yet (launch answers 412); set: keys below; empty: confirmed none.
  status: Type.Union([Type.Literal("unset"), Type.Literal("set"), Type.Literal("empty")]),
  keys: Type.Array(
    ClosedRecord({ name: Type.String(), size: Type.Integer({ minimum: 0 }), sha256: Sha256Hex }),
  ),
  total_bytes: Type.Integer({ minimum: 0 }),
  revision: Type.Integer({ minimum: 0 }),
  locked: Type.Boolean(),
  updated_at: Type.Union([Timestamp, Type.Null()]),
});

/** launch: the miner's go-ahead, recorded once; the env it locked. */
export const MinerEnvLaunchResponse = NamedRecord("MinerEnvLaunchResponse", {
  submission_id: Type.Integer({ minimum: 1 }),
  launched_at: Timestamp,
  env_status: Type.Union([Type.Literal("set"), Type.Literal("empty")]),
  env_revision: Type.Integer({ minimum: 1 }),
  // Where the submission stands: eval/prepare also needs a verified allow.
  submission_state: Type.String(),
});

/** The records /openapi.json names, in its order (challenge.ts lists each feature's). */
export const MINER_ENV_RECORDS = {
  MinerEnvUpdateRequest,
  MinerEnvMetadataResponse,
  MinerEnvLaunchResponse,
};
