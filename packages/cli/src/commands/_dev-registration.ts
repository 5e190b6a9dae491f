import { callMaster } from "./_master-client.js";

/** How `platform dev` reaches its own master's admin API. */
export interface DevMaster {
  /** The public listener (proxy, registry, weights). */
  url: string;
  /** The admin listener (admin API and pages, broker): every call here goes to it. */
  adminUrl: string;
  adminToken: string;
  /**
   * Let the master's broker run `images` (what a project's dev section declares), unless the
   * user listed the broker's images (PLATFORM_BROKER_IMAGES) themselves. true when allowed.
   */
  allowTaskImages?(images: readonly string[]): boolean;
}

/** A challenge as `platform dev` registers it. */
export interface DevRegistration {
  slug: string;
  name: string;
  version: string;
  image: string;
  description: string | undefined;
  emissionPercent: number;
}

/** The two tokens the master minted (or re-minted) for a challenge. */
export interface DevTokens {
  challengeToken: string;
  brokerToken: string;
  /** true when the slug existed (a persisted data dir) and its tokens were rotated. */
  rotated: boolean;
}

/** Marks what `platform dev` registered, so a later run can tell its own records from others'. */
export const DEV_METADATA = { dev: true } as const;

interface TokensReply {
  challenge_token?: string;
  docker_broker_token?: string;
}

const admin = (master: DevMaster, extra: Record<string, string> = {}) => ({
  "x-admin-token": master.adminToken,
  ...extra,
});
const jsonHeaders = (master: DevMaster) => admin(master, { "content-type": "application/json" });
const path = (slug: string, rest = "") => `/v1/admin/challenges/${encodeURIComponent(slug)}${rest}`;

// Every PATCH carries all of these, so a record kept from an earlier run is brought up to date
// with the challenge definition running now.
const recordFields = (registration: DevRegistration) => ({
  name: registration.name,
  image: registration.image,
  version: registration.version,
  emission_percent: registration.emissionPercent,
  description: registration.description ?? null,
  metadata: DEV_METADATA,
});

/**
 * Register the challenge through the admin API, so its tokens are minted by the master. A slug
 * that already exists (a data dir kept from an earlier run) keeps its record and gets new
 * tokens (the old ones stop working); {@link activateAt} then updates its fields.
 */
export async function registerOrRotate(
  master: DevMaster,
  registration: DevRegistration,
): Promise<DevTokens> {
  const fields = recordFields(registration);
  const created = await callMaster<TokensReply & { code?: string }>(
    master.adminUrl,
    "/v1/admin/challenges",
    {
      method: "POST",
      headers: jsonHeaders(master),
      body: JSON.stringify({ slug: registration.slug, ...fields }),
      expect: [201, 409],
    },
  );
  let tokens: TokensReply = created.body;
  const rotated = created.status === 409;
  if (rotated) {
    tokens = (
      await callMaster<TokensReply>(
        master.adminUrl,
        path(registration.slug, "/tokens/rotate?token=both"),
        {
          method: "POST",
          headers: admin(master),
        },
      )
    ).body;
  }
  if (!tokens.challenge_token || !tokens.docker_broker_token) {
    throw new Error(`the master returned no tokens for ${registration.slug}`);
  }
  return {
    challengeToken: tokens.challenge_token,
    brokerToken: tokens.docker_broker_token,
    rotated,
  };
}

/** Point the record at the running challenge and activate it. */
export async function activateAt(
  master: DevMaster,
  registration: DevRegistration,
  internalBaseUrl: string,
): Promise<void> {
  const slug = registration.slug;
  await callMaster(master.adminUrl, path(slug), {
    method: "PATCH",
    headers: jsonHeaders(master),
    body: JSON.stringify({ ...recordFields(registration), internal_base_url: internalBaseUrl }),
  });
  await callMaster(master.adminUrl, path(slug, "/activate"), {
    method: "POST",
    headers: admin(master),
  });
}

/**
 * Deactivate challenges an earlier `platform dev` registered that this run did not start: their
 * address is gone, and counting them would fail every weights collection. Returns their slugs.
 */
export async function deactivateStale(
  master: DevMaster,
  running: ReadonlySet<string>,
): Promise<string[]> {
  const { body } = await callMaster<{
    challenges: { slug: string; status: string; metadata?: Record<string, unknown> }[];
  }>(master.adminUrl, "/v1/admin/challenges", { headers: admin(master) });
  const stale = body.challenges.filter(
    (row) => row.metadata?.["dev"] === true && row.status === "active" && !running.has(row.slug),
  );
  for (const row of stale) {
    await callMaster(master.adminUrl, path(row.slug, "/deactivate"), {
      method: "POST",
      headers: admin(master),
    });
  }
  return stale.map((row) => row.slug);
}

/** One weights collection now; answers how each challenge fared. */
export async function collectWeights(
  master: DevMaster,
): Promise<{ slug: string; status: string; error: string | null }[]> {
  const { body } = await callMaster<{
    sources?: { slug: string; status: string; error: string | null }[];
  }>(master.adminUrl, "/v1/admin/weights/collect", { method: "POST", headers: admin(master) });
  return body.sources ?? [];
}
