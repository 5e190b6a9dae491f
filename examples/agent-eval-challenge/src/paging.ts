/**
 * Where a paged list (review history and reports, eval status) resumes: the integer position a
 * signed cursor of this list carries, or null for the first page. A cursor from another list
 * (its scope differs), an altered one or one carrying anything else is a 400 invalid_cursor.
 */
import { HttpError } from "@platform/challenge-sdk";
import { CursorError, decodeCursor } from "./crypto/index.js";

export function pagePosition(
  key: Buffer,
  scope: string,
  cursor: string | undefined,
): number | null {
  if (cursor === undefined) return null;
  try {
    const after = decodeCursor(key, scope, cursor);
    if (typeof after === "number" && Number.isInteger(after)) return after;
  } catch (error) {
    if (!(error instanceof CursorError)) throw error;
  }
  throw new HttpError(400, "invalid_cursor", "The cursor is not one this list issued.");
}
