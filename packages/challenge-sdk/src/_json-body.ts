import { parseJsonBody, ValidationError, validateValue } from "@platform/core";
import type { Static, TSchema } from "@sinclair/typebox";

/**
 * Parse JSON bytes and validate them against `schema`: invalid JSON or a value that does not
 * match is a 422 in FastAPI's shape (`{"detail":[{"loc":["body",...],"msg","type"}]}`). For
 * routes that take a raw body in several forms (a ZIP or a JSON document).
 * @example const submission = decodeJsonBody(SubmissionCreate, ctx.body);
 */
export function decodeJsonBody<S extends TSchema>(schema: S, bytes: Uint8Array): Static<S> {
  const result = validateValue<Static<S>>(schema, parseJsonBody(bytes), "body");
  if (!result.ok) throw new ValidationError(result.issues);
  return result.value;
}
