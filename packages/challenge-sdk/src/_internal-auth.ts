import { bearerToken, HttpError, secretsEqual } from "@platform/core";
import type { SlugHeaderRule } from "./challenge-router.js";
import { SLUG_HEADERS } from "./proxy-contract/proxy-contract.js";
import type { BearerAnswer, BearerCheck, BearerRefusal, RequestInfo } from "./route-context.js";

function unauthorized(code: string, message: string): HttpError {
  return new HttpError(401, code, message, { headers: { "www-authenticate": "Bearer" } });
}

/**
 * A route's own bearer: `Authorization: Bearer <token>` judged by `check`. Answers what the check
 * accepted with (a record, or true); a missing token or a refusal (false, null, undefined) is 401
 * with the refusal's code. An HttpError the check throws is the answer as it is.
 */
async function checkBearer(
  info: RequestInfo,
  check: BearerCheck,
  code: string,
  refusal: BearerRefusal | undefined,
): Promise<object | true> {
  const refusedCode = refusal?.code ?? code;
  const presented = bearerToken(info.request.headers);
  if (presented === null) throw unauthorized(refusedCode, "Missing bearer token");
  const answer: BearerAnswer = await check(presented, info);
  if (answer === true || (typeof answer === "object" && answer !== null)) return answer;
  if (answer === false || answer === null || answer === undefined) {
    throw unauthorized(refusedCode, refusal?.message ?? "Invalid bearer token");
  }
  // A string or a number is neither a record nor a verdict: a bug in the check, refused (500).
  throw new TypeError(
    `a bearer check answers a record, a boolean, null or undefined, not a ${typeof answer}`,
  );
}

/**
 * A public route's own bearer (a run- or assignment-scoped token): what the check resolved it
 * to, or 401 `invalid_token` (or the route's refusal code).
 */
export function checkPublicBearer(
  info: RequestInfo,
  check: BearerCheck,
  refusal?: BearerRefusal,
): Promise<object | true> {
  return checkBearer(info, check, "invalid_token", refusal);
}

/**
 * The internal credential: `Authorization: Bearer <CHALLENGE_TOKEN>` (401
 * `invalid_internal_token`), then a slug header naming this challenge (403
 * `challenge_slug_mismatch`). Every slug header sent must name it; at least one is required,
 * unless `slugHeader` is "if-sent" (a cron or worker holding the bearer alone). With `check`,
 * the bearer is judged by it instead of CHALLENGE_TOKEN, and what it accepted with is answered.
 */
export async function checkInternalAuth(
  info: RequestInfo,
  token: string | null,
  own?: { check: BearerCheck; refusal?: BearerRefusal | undefined },
  slugHeader: SlugHeaderRule = "required",
): Promise<object | true | undefined> {
  let accepted: object | true | undefined;
  if (own) {
    accepted = await checkBearer(info, own.check, "invalid_internal_token", own.refusal);
  } else if (token !== null) {
    await checkBearer(
      info,
      (presented) => secretsEqual(presented, token),
      "invalid_internal_token",
      undefined,
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
  return accepted;
}
