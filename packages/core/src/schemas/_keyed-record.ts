import { type TSchema, Type } from "@sinclair/typebox";

/**
 * A record whose KEYS must match `keyPattern`. TypeBox's plain Record puts the key pattern in
 * `patternProperties` and lets any other key through; `additionalProperties: false` is what
 * makes a key like "A=B" (an env name) or "BAD KEY" (a label) fail validation.
 */
export function keyedRecord<V extends TSchema>(keyPattern: string, value: V, description?: string) {
  return Type.Record(Type.String({ pattern: keyPattern }), value, {
    additionalProperties: false,
    ...(description ? { description } : {}),
  });
}

/** Environment variable names, as a shell and Docker accept them (at most 128 characters). */
export const ENV_NAME = "^[A-Za-z_][A-Za-z0-9_]{0,127}$";
