/**
 * The records of the instance-seed release (instance-seed-release.ts): an X25519 public key and
 * the quote binding it to the run, answered with the seed sealed to that key. Neither record
 * holds the seed in the clear: the answer is ciphertext only the quoting TD opens.
 */
import { Type } from "@platform/challenge-sdk";
import { ReviewAttestation } from "../review/review-envelope-schemas.js";
import { ClosedRecord, MintedId, NamedRecord } from "../schema-primitives.js";

const RawX25519Key = Type.String({ pattern: "^[A-Za-z0-9_-]{43}$" });

export const InstanceSeedRequest = NamedRecord("InstanceSeedRequest", {
  public_key: RawX25519Key,
  // sha256(domain, plan digest, run id, plan nonce, public key) padded to 64 bytes.
  report_data_hex: Type.String({ pattern: "^[0-9a-f]{128}$" }),
  attestation: ReviewAttestation,
});

export const InstanceSeedResponse = NamedRecord("InstanceSeedResponse", {
  run_id: MintedId,
  sealed: ClosedRecord({
    ephemeral_public_key: RawX25519Key,
    box: Type.String({ pattern: "^[A-Za-z0-9_-]+$" }),
  }),
});

/** The records /openapi.json names, in its order (challenge.ts lists each feature's). */
export const INSTANCE_SEED_RECORDS = { InstanceSeedRequest, InstanceSeedResponse };
