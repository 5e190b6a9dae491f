import { createHmac } from "node:crypto";
import type { ChallengeRow } from "../registry/challenge-row.js";
import type { DesiredRuntime } from "./runtime-state-store.js";

/** Registry statuses whose challenge runs; every other one (inactive, disabled, draft) does not. */
export function desiredOf(row: ChallengeRow): DesiredRuntime {
  return row.status === "active" ? "running" : "stopped";
}

/**
 * Does the reconciler run this challenge's container? Not when its record says
 * `metadata.managed: false`: the operator runs it elsewhere, at its internal_base_url.
 */
export function isManaged(row: ChallengeRow): boolean {
  return row.metadata.managed !== false;
}

/** Is `image` already pinned to content (`repo@sha256:…`, or an engine image id)? */
export function isPinned(image: string): boolean {
  return /@sha256:[0-9a-f]{64}$/.test(image) || /^sha256:[0-9a-f]{64}$/.test(image);
}

/**
 * What the container of `row` must be made of, beyond its name: the pinned image and every
 * registry field a container is built from. Two containers built from equal specs are
 * interchangeable; anything else in the registry (name, emission, description) never restarts
 * one. A rotated token changes the salts, so the container is replaced with the new tokens.
 */
export function containerSpec(row: ChallengeRow, pinnedImage: string): Record<string, unknown> {
  return {
    image: pinnedImage,
    resources: row.resources,
    volumes: row.volumes,
    env: row.env,
    secrets: row.secrets,
    port: row.metadata.port ?? null,
    challenge_token_salt: row.challenge_token_salt,
    broker_token_salt: row.broker_token_salt,
  };
}

/** The most replicas `metadata.replicas` may ask of the Swarm backend. */
export const MAX_REPLICAS = 32;

/**
 * How many tasks the challenge's Swarm service runs: `metadata.replicas`, else 1 (a challenge
 * with its embedded database in a volume cannot share it; one that uses DATABASE_URL can scale).
 * Throws a one-line reason when the record asks for something else than 1 to 32.
 */
export function replicasOf(row: ChallengeRow): number {
  const value = row.metadata.replicas;
  if (value === undefined || value === null) return 1;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > MAX_REPLICAS)
    throw new Error(`metadata.replicas must be an integer from 1 to ${MAX_REPLICAS}`);
  return value;
}

/** The Swarm service's spec: the container's, its replicas, and the backend (never equal to a container's). */
export function serviceSpec(row: ChallengeRow, pinnedImage: string): Record<string, unknown> {
  return { ...containerSpec(row, pinnedImage), backend: "swarm", replicas: replicasOf(row) };
}

// Sorted keys at every depth: jsonb hands objects back in its own key order.
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    );
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * The spec's fingerprint, carried by the container as a label: an HMAC under the master key,
 * because the spec holds secret values and a plain hash of a short secret could be guessed
 * from `docker inspect`.
 */
export function specHash(spec: Record<string, unknown>, masterKey: Buffer): string {
  return createHmac("sha256", masterKey)
    .update("platform-container-spec\0")
    .update(canonical(spec))
    .digest("hex")
    .slice(0, 32);
}
