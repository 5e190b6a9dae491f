import type { ChallengeAdminView, RegistryChallenge } from "@platform/core";
import type { ChallengeRow } from "./challenge-row.js";

// Metadata or env keys that must never reach a public view, whatever the operator put there.
const SENSITIVE_KEY =
  /(token|secret|password|passwd|private|api[-_]?key|credential|database[-_]?url|dsn|mnemonic|seed|internal|note)/i;

function withoutSensitiveKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).filter(([key]) => !SENSITIVE_KEY.test(key)));
}

/** The proxy path a challenge is served under. */
export function publicProxyBasePath(slug: string): string {
  return `/challenges/${slug}`;
}

/** A challenge as the public registry shows it: secret names only, sensitive keys filtered. */
export function toRegistryChallenge(row: ChallengeRow): RegistryChallenge {
  return {
    slug: row.slug,
    name: row.name,
    image: row.image,
    version: row.version,
    emission_percent: row.emission_percent,
    status: row.status,
    description: row.description,
    metadata: withoutSensitiveKeys(row.metadata),
    resources: row.resources,
    volumes: row.volumes,
    env: withoutSensitiveKeys(row.env),
    internal_base_url: row.internal_base_url ?? "",
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
