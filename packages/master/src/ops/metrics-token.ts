// Who may scrape the master's GET /metrics (admin listener only): the admin token, or a
// scrape-only PLATFORM_METRICS_TOKEN that opens nothing else. The metrics token is kept as its
// sha256 (like the challenge tokens in the registry) and compared in constant time; neither
// token is ever logged or put in a message.
import { readFileSync } from "node:fs";
import {
  type BeforeHook,
  bearerToken,
  HttpError,
  hashToken,
  MIN_ADMIN_TOKEN_LENGTH,
  registerLogSecret,
  secretsEqual,
  tokenMatchesHash,
} from "@platform/core";
import { ADMIN_TOKEN_HEADER } from "../admin/admin-auth.js";

/**
 * The sha256 of the scrape token from PLATFORM_METRICS_TOKEN, or from the file
 * PLATFORM_METRICS_TOKEN_FILE names (trimmed: a Docker or Kubernetes secret); null when neither
 * is set. Throws (without the value) for an unreadable file or a token shorter than 16 characters.
 */
export function loadMetricsTokenHash(
  env: Record<string, string | undefined> = process.env,
): string | null {
  const direct = env["PLATFORM_METRICS_TOKEN"];
  const file = env["PLATFORM_METRICS_TOKEN_FILE"];
  let token: string;
  let source: string;
  if (direct !== undefined && direct !== "") {
    token = direct.trim();
    source = "PLATFORM_METRICS_TOKEN";
  } else if (file) {
    try {
      token = readFileSync(file, "utf8").trim();
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code ?? "unreadable";
      throw new Error(`PLATFORM_METRICS_TOKEN_FILE ${file} cannot be read (${reason})`);
    }
    source = "PLATFORM_METRICS_TOKEN_FILE";
  } else {
    return null;
  }
  if (token.length < MIN_ADMIN_TOKEN_LENGTH) {
    throw new Error(
      `the metrics token from ${source} is shorter than ${MIN_ADMIN_TOKEN_LENGTH} characters`,
    );
  }
  registerLogSecret(token);
  return hashToken(token);
}

/**
 * Refuse (401) a scrape without the admin token (Bearer or X-Admin-Token) or the metrics token
 * (Bearer), each compared in constant time.
 */
export function requireMetricsAccess(
  adminToken: string,
  metricsTokenHash: string | undefined,
): BeforeHook {
  return ({ request }) => {
    const bearer = bearerToken(request.headers);
    const admin = request.headers.get(ADMIN_TOKEN_HEADER) ?? bearer;
    const adminOk = admin !== null && adminToken !== "" && secretsEqual(admin, adminToken);
    const scrapeOk =
      bearer !== null &&
      metricsTokenHash !== undefined &&
      tokenMatchesHash(bearer, metricsTokenHash);
    if (adminOk || scrapeOk) return;
    throw new HttpError(
      401,
      "metrics_unauthorized",
      "The admin token or the metrics token is required (Authorization: Bearer)",
      { headers: { "www-authenticate": 'Bearer realm="platform-metrics"' } },
    );
  };
}
