import { bearerToken, HttpError, secretsEqual } from "@platform/core";
import type { SlugHeaderRule } from "./challenge-router.js";
import { SLUG_HEADERS } from "./proxy-contract/proxy-contract.js";
import type { BearerCheck, RequestInfo } from "./route-context.js";

function unauthorized(code: string, message: string): HttpError {
  return new HttpError(401, code, message, { headers: { "www-authenticate": "Bearer" } });
}

/** A route's own bearer: `Authorization: Bearer <token>` judged by `check`, else 401 `code`. */
async function checkBearer(info: RequestInfo, check: BearerCheck, code: string): Promise<void> {
  const presented = bearerToken(info.request.headers);
  if (presented === null) throw unauthorized(code, "Missing bearer token");
  if (!(await check(presented, info))) throw unauthorized(code, "Invalid bearer token");
}

/** A public route's own bearer (a run- or assignment-scoped token): 401 `invalid_token`. */
export function checkPublicBearer(info: RequestInfo, check: BearerCheck): Promise<void> {
  return checkBearer(info, check, "invalid_token");
}

/**
 * The internal credential: `Authorization: Bearer <CHALLENGE_TOKEN>` (401
 * `invalid_internal_token`), then a slug header naming this challenge (403
 * `challenge_slug_mismatch`). Every slug header sent must name it; at least one is required,
 * unless `slugHeader` is "if-sent" (a cron or worker holding the bearer alone). With `check`,
 * the bearer is judged by it instead of CHALLENGE_TOKEN.
 */
export async function checkInternalAuth(
  info: RequestInfo,
  token: string | null,
  check?: BearerCheck,
  slugHeader: SlugHeaderRule = "required",
): Promise<void> {
  if (check) {
    await checkBearer(info, check, "invalid_internal_token");
  } else if (token !== null) {
    await checkBearer(
      info,
      (presented) => secretsEqual(presented, token),
      "invalid_internal_token",
    );
  }
  const slugs = SLUG_HEADERS.map((name) => info.request.headers.get(name)).filter(
    (value): value is string => value !== null,
  );
  if (slugs.length === 0 && slugHeader === "required") {
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
