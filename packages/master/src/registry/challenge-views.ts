import type { ChallengeAdminView, RegistryChallenge } from "@platform/core";
import type { ChallengeRow } from "./challenge-row.js";
import { publicEnvNames, publicRecord, withoutUserinfo } from "./public-redaction.js";

/** The proxy path a challenge is served under. */
export function publicProxyBasePath(slug: string): string {
  return `/challenges/${slug}`;
}

/**
 * A challenge as the public registry shows it: secret and env names only (env values map to
 * null), metadata without sensitive keys or credential-carrying values at any depth, and the
 * internal URL without userinfo (see public-redaction.ts; documented in docs/master.md).
 */
export function toRegistryChallenge(row: ChallengeRow): RegistryChallenge {
  return {
    slug: row.slug,
    name: row.name,
    image: row.image,
    version: row.version,
    emission_percent: row.emission_percent,
    status: row.status,
    description: row.description,
    metadata: publicRecord(row.metadata),
    resources: row.resources,
    volumes: row.volumes,
    env: publicEnvNames(row.env),
    internal_base_url: withoutUserinfo(row.internal_base_url),
    public_proxy_base_path: publicProxyBasePath(row.slug),
    required_capabilities: row.required_capabilities,
    secrets: Object.keys(row.secrets).sort(),
  };
}

/** A challenge as an admin sees it: everything but secret values and clear tokens. */
export function toAdminView(
  row: ChallengeRow,
): ChallengeAdminView & { status_reason: string | null } {
  return {
    ...toRegistryChallenge(row),
    metadata: row.metadata,
    env: row.env,
    api_version: row.api_version,
    status_reason: row.status_reason,
    challenge_token_hint: row.challenge_token_hint,
    docker_broker_token_hint: row.broker_token_hint,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
