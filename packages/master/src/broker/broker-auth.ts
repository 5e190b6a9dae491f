import { bearerToken, HttpError, hashToken, isSlug, tokenMatchesHash } from "@platform/core";
import type { ChallengeRow } from "../registry/challenge-row.js";
import type { ChallengeStore } from "../registry/challenge-store.js";

/** The header naming the challenge a broker call acts for. */
export const CHALLENGE_SLUG_HEADER = "x-platform-challenge-slug";

// Compared against when the slug is unknown, so an unknown slug costs what a wrong token costs.
const DECOY_HASH = hashToken("platform-broker-decoy-token");

function unauthorized(): HttpError {
  return new HttpError(
    401,
    "broker_unauthorized",
    "A valid broker token (Authorization: Bearer) and X-Platform-Challenge-Slug are required",
    {
      headers: { "www-authenticate": 'Bearer realm="platform-broker"' },
    },
  );
}

/**
 * The challenge a broker call acts for: its broker token (Bearer) must match the registry's
 * hash for the slug in X-Platform-Challenge-Slug, in constant time. A missing header, a wrong
 * token, another challenge's token and an unknown slug all answer the same 401 (no oracle);
 * a disabled challenge is 403 `challenge_disabled`. Active, inactive and draft challenges may
 * run workloads: a draft is tested before it goes live and an inactive one drains its jobs.
 */
export async function authenticateBroker(
  store: ChallengeStore,
  headers: Headers,
): Promise<ChallengeRow> {
  const token = bearerToken(headers);
  const slug = headers.get(CHALLENGE_SLUG_HEADER);
  if (!token || !slug) throw unauthorized();
  const row = isSlug(slug) ? await store.find(slug) : null;
  const matches = row
    ? store.brokerTokenMatches(row, token)
    : tokenMatchesHash(token, DECOY_HASH) && false;
  if (!row || !matches) throw unauthorized();
  if (row.status === "disabled") {
    throw new HttpError(
      403,
      "challenge_disabled",
      `Challenge "${row.slug}" is disabled: the broker refuses its workloads`,
    );
  }
  return row;
}
