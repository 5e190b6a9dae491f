import { type BeforeHook, bearerToken, HttpError, secretsEqual } from "@platform/core";

/** The header the CLI and scripts send the admin token in. */
export const ADMIN_TOKEN_HEADER = "x-admin-token";

/** The admin token a request presents, from X-Admin-Token or Authorization: Bearer. */
export function presentedAdminToken(headers: Headers): string | null {
  return headers.get(ADMIN_TOKEN_HEADER) ?? bearerToken(headers);
}

/**
 * Refuse (401) a request that does not present the admin token, compared in constant time.
 * The JSON admin API takes the token in headers only: a browser's cookie never authorises it,
 * so it cannot be driven by cross-site requests.
 */
export function requireAdminToken(adminToken: string): BeforeHook {
  return ({ request }) => {
    const presented = presentedAdminToken(request.headers);
    if (presented === null || !secretsEqual(presented, adminToken)) {
      throw new HttpError(
        401,
        "admin_unauthorized",
        "A valid admin token is required (X-Admin-Token or Authorization: Bearer)",
        {
          headers: { "www-authenticate": 'Bearer realm="platform-admin"' },
        },
      );
    }
  };
}
