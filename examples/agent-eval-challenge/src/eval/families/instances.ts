/**
 * A run's instances: one input per (family, trial), drawn from the run's instance seed. The seed
 * is a 32-byte secret the service derives for the run once its plan (and so the agent's sha256)
 * is fixed, and releases sealed to the measured evaluator only (instance-seed-release.ts); the
 * evaluator and a replay audit both call instanceInput with it and get the same bytes.
 */
import { createHmac } from "node:crypto";
import { seededRandom } from "./seeded-random.js";
import type { TaskFamily } from "./task-family.js";

export const INSTANCE_SEED_BYTES = 32;
const INSTANCE_DOMAIN = "platform/agent-eval/instance/v1";

/** The input of `family`'s instance for `trial` (1-based) of the run whose seed is `seed`. */
export function instanceInput(family: TaskFamily, seed: Buffer, trial: number): string {
  if (seed.length !== INSTANCE_SEED_BYTES) throw new RangeError("an instance seed is 32 bytes");
  const key = createHmac("sha256", seed)
    .update(`${INSTANCE_DOMAIN}\n${family.id}\n${trial}`)
    .digest();
  const input = family.generate(seededRandom(key));
  if (typeof input !== "string") throw new TypeError(`family ${family.id} generated no text`);
  return input;
}

/** The checker's score of one trial's output: 1 (correct) or 0; a checker that throws is 0. */
export function checkInstance(family: TaskFamily, input: string, output: Buffer): 0 | 1 {
  try {
    return family.check(input, output.toString("utf8")) === true ? 1 : 0;
  } catch {
    return 0;
  }
}
