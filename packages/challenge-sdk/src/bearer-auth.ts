import { bearerToken, HttpError } from "@platform/core";
import type { AuthHook, RequestInfo } from "./challenge-router.js";

/** Judges a presented bearer token (compare secrets with `secretsEqual` or `tokenMatchesHash`). */
export type BearerCheck<Cfg = unknown> = (
  token: string,
  request: RequestInfo<Cfg>,
) => boolean | Promise<boolean>;

/**
 * An `auth` hook for a route with its own bearer (an eval-run token, a review-assignment token):
 * 401 `invalid_token` when `Authorization: Bearer` is missing or `check` says no.
 * @example router.public({ method: "POST", path: "/evaluation/v1/runs/:id/result", auth: bearerAuth((t, r) => runTokenValid(r, t)), handler })
 */
export function bearerAuth<Cfg = unknown>(check: BearerCheck<Cfg>): AuthHook<Cfg> {
  return async (request) => {
    const token = bearerToken(request.request.headers);
    const refuse = (message: string) =>
      new HttpError(401, "invalid_token", message, { headers: { "www-authenticate": "Bearer" } });
    if (token === null) throw refuse("Missing bearer token");
    if (!(await check(token, request))) throw refuse("Invalid bearer token");
  };
}
