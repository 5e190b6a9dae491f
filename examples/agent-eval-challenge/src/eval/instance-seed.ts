/**
 * The run's instance seed: the secret its task instances are drawn from. An HMAC of the run (its
 * id and plan nonce) under a key derived from the master key, so it exists from the moment the
 * plan fixes the agent, is the same whenever it is computed again (a replay audit), and is stored
 * nowhere in the clear: the plan carries only its sha256. It leaves the service sealed to an
 * attested evaluator (instance-seed-release.ts) and, once the run is accepted, in the validators'
 * replay-audit request.
 */
import { createHmac } from "node:crypto";
import { deriveKey, KeyLabel } from "../crypto/index.js";

export function instanceSeed(secretKey: Buffer, run: { runId: string; nonce: string }): Buffer {
  return createHmac("sha256", deriveKey(secretKey, KeyLabel.instanceSeed))
    .update(`${run.runId}\n${run.nonce}`)
    .digest();
}
