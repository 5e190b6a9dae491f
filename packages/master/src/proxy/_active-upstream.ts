import { HttpError, isSlug } from "@platform/core";
import type { ChallengeRow } from "../registry/challenge-row.js";
import type { ChallengeStore } from "../registry/challenge-store.js";
import { parseBaseUrl, upstreamUnavailable } from "./upstream-client.js";

// The one answer for "not registered" and "not active": a client cannot tell them apart.
export function noActiveChallenge(slug: string): HttpError {
  const name = isSlug(slug) ? `"${slug}"` : "with that slug";
  return new HttpError(404, "challenge_not_found", `No active challenge ${name}`);
}

// The active challenge `slug` and where it listens: 404 unless active, 502 without an address.
export async function activeUpstream(
  store: ChallengeStore,
  slug: string,
): Promise<{ row: ChallengeRow; base: URL }> {
  const row = isSlug(slug) ? await store.findActiveCached(slug) : null;
  if (!row) throw noActiveChallenge(slug);
  const base = parseBaseUrl(row.internal_base_url);
  if (!base) throw upstreamUnavailable(slug, "has no upstream address configured");
  return { row, base };
}
