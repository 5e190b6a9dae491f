/**
 * The unnamed building blocks several features' schemas share (ids, digests, times), defined
 * once so every route and record describes them the same way in /openapi.json.
 */
import { type TSchema, Type } from "@platform/challenge-sdk";
import { CURSOR_MAX_LENGTH } from "./crypto/index.js";

/** A record published by `title` in /openapi.json: exactly these fields, nothing else. */
export function NamedRecord<Fields extends Record<string, TSchema>>(title: string, fields: Fields) {
  return Type.Object(fields, { additionalProperties: false, title });
}

/** A record inside another (not published by name): exactly these fields, nothing else. */
export function ClosedRecord<Fields extends Record<string, TSchema>>(fields: Fields) {
  return Type.Object(fields, { additionalProperties: false });
}

/** Exactly one of `values` (in /openapi.json: an anyOf of their constants). */
export function Literals<Value extends string>(
  values: readonly Value[],
  options?: Parameters<typeof Type.Union>[1],
) {
  return Type.Union(
    values.map((value) => Type.Literal(value)),
    options,
  );
}

/** `schema`, or null. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** An id this service mints (assignments, sessions, approvals, runs): random base64url. */
export const MintedId = Type.String({ pattern: "^[A-Za-z0-9_-]{1,64}$" });

/** A sha256 digest as lowercase hex. */
export const Sha256Hex = Type.String({ pattern: "^[0-9a-f]{64}$" });

/** 48 bytes as lowercase hex: a sha384 digest or a TDX measurement register. */
export const Sha384Hex = Type.String({ pattern: "^[0-9a-f]{96}$" });

export const Timestamp = Type.String({ format: "date-time" });

/** A number from 0 to 1: a score, a trial's score, a rate, a tolerance. */
export const Fraction = Type.Number({ minimum: 0, maximum: 1 });

/** A task of the task set, as plans, results, progress and the live views name it. */
export const TaskId = Type.String({ pattern: "^[a-z0-9][a-z0-9-]{0,63}$" });

/**
 * A paged read's query: a signed cursor from the previous page (at most CURSOR_MAX_LENGTH
 * characters, the spec's limit) and how many items, 1 to `maxLimit` (`defaultLimit` unless asked).
 */
export function PageQuery(maxLimit: number, defaultLimit: number) {
  return Type.Object({
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: CURSOR_MAX_LENGTH })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: maxLimit, default: defaultLimit })),
  });
}

/** A paged answer's cursor to the next page; null on the last. */
export const NextCursor = Nullable(Type.String({ maxLength: CURSOR_MAX_LENGTH }));
