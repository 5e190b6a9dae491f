import { textResponse } from "./_known-body.js";
import { HttpError } from "./http-error.js";
import type { ValidationIssue } from "./validation.js";

/**
 * 422 with FastAPI's exact HTTPValidationError body, `{"detail":[{"loc","msg","type"}]}`, so
 * clients written against the Python services parse our errors unchanged.
 */
export class ValidationError extends HttpError {
  readonly issues: ValidationIssue[];

  constructor(issues: ValidationIssue[]) {
    super(422, "validation_error", issues[0]?.msg ?? "Request validation failed");
    this.issues = issues;
  }

  override toResponse(): Response {
    return textResponse(JSON.stringify({ detail: this.issues }), {
      status: 422,
      headers: { "content-type": "application/json" },
    });
  }
}
