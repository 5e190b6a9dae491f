import { bearerToken, HttpError, secretsEqual } from "@platform/core";
import type { RequestInfo } from "./challenge-router.js";
import { SLUG_HEADERS } from "./proxy-contract.js";

function unauthorized(message: string): HttpError {
  return new HttpError(401, "invalid_internal_token", message, {
    headers: { "www-authenticate": "Bearer" },
  });
}

/**
 * The internal credential: `Authorization: Bearer <CHALLENGE_TOKEN>` (401
 * `invalid_internal_token`), then a slug header naming this challenge (403
 * `challenge_slug_mismatch`). Every slug header sent must name it; at least one is required.
 * With `check`, the bearer is judged by it instead of CHALLENGE_TOKEN.
 */
export async function checkInternalAuth(
  info: RequestInfo,
  token: string | null,
  check?: (token: string, info: RequestInfo) => boolean | Promise<boolean>,
): Promise<void> {
  const presented = bearerToken(info.request.headers);
  if (check) {
    if (presented === null) throw unauthorized("Missing bearer token");
    if (!(await check(presented, info))) throw unauthorized("Invalid bearer token");
  } else if (token !== null) {
    if (presented === null) throw unauthorized("Missing bearer token");
    if (!secretsEqual(presented, token)) throw unauthorized("Invalid bearer token");
  }
  const slugs = SLUG_HEADERS.map((name) => info.request.headers.get(name)).filter(
    (value): value is string => value !== null,
  );
  if (slugs.length === 0) {
    throw new HttpError(
      403,
      "challenge_slug_mismatch",
      "Missing X-Platform-Challenge-Slug (or x-core-challenge-slug) header",
    );
  }
  if (slugs.some((slug) => slug.trim() !== info.slug)) {
    throw new HttpError(403, "challenge_slug_mismatch", "The slug header names another challenge");
  }
}
