import { type Static, Type } from "@sinclair/typebox";

/** Body of every non-validation error: FastAPI's `detail` plus a stable `code`. */
export const ErrorResponse = Type.Object({ detail: Type.String(), code: Type.String() });
export type ErrorResponse = Static<typeof ErrorResponse>;

/** One item of a 422 body. */
export const ValidationIssueSchema = Type.Object({
  loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
  msg: Type.String(),
  type: Type.String(),
});

/** 422 body, FastAPI's HTTPValidationError. */
export const HTTPValidationError = Type.Object({ detail: Type.Array(ValidationIssueSchema) });
export type HTTPValidationError = Static<typeof HTTPValidationError>;
