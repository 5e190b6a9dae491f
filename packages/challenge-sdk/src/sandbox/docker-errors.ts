/**
 * Reading dockerode's errors: the Engine API's status and message. Every Docker call of the
 * task runner, the broker and the challenge runtime goes through these, so "gone", "in use" and
 * "refused" mean the same thing everywhere.
 */

/** The HTTP status the Engine API answered with, when `error` came from it. */
export function dockerStatus(error: unknown): number | undefined {
  const status = (error as { statusCode?: unknown })?.statusCode;
  return typeof status === "number" ? status : undefined;
}

/** Did Docker answer "no such object" (404)? */
export function isMissing(error: unknown): boolean {
  return dockerStatus(error) === 404;
}

/** Did Docker answer "in use" or "conflict" (409)? */
export function isConflict(error: unknown): boolean {
  return dockerStatus(error) === 409;
}

/**
 * Docker's own message for a refused call, without dockerode's "(HTTP code …)" wrapping.
 * @example dockerMessage(error) // "No such image: ghcr.io/me/eval:1"
 */
export function dockerMessage(error: unknown): string {
  const json = (error as { json?: { message?: unknown } })?.json;
  if (json && typeof json.message === "string") return json.message;
  const reason = (error as { reason?: unknown })?.reason;
  const message = error instanceof Error ? error.message : String(error);
  return typeof reason === "string" && message.includes("(HTTP code")
    ? `${reason}: ${message.replace(/^\(HTTP code \d+\)\s*/, "")}`
    : message;
}

/**
 * Runs `action`, treating "no such object" (404) as done: removing what is already gone is
 * not a failure. Resolves true when the object was there.
 * @example await ignoreMissing(() => docker.getContainer(name).remove({ force: true }));
 */
export async function ignoreMissing(action: () => Promise<unknown>): Promise<boolean> {
  try {
    await action();
    return true;
  } catch (error) {
    if (isMissing(error)) return false;
    throw error;
  }
}
