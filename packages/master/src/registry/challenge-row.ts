import type { ChallengeStatus } from "@platform/core";

/** One row of the `challenges` table as postgres.js returns it. */
export interface ChallengeRow {
  slug: string;
  name: string;
  image: string;
  version: string;
  emission_percent: number;
  status: ChallengeStatus;
  status_reason: string | null;
  description: string | null;
  api_version: string;
  internal_base_url: string | null;
  required_capabilities: string[];
  resources: Record<string, unknown>;
  volumes: Record<string, string>;
  env: Record<string, string>;
  secrets: Record<string, string>;
  metadata: Record<string, unknown>;
  challenge_token_salt: string;
  challenge_token_hash: string;
  challenge_token_hint: string;
  broker_token_salt: string;
  broker_token_hash: string;
  broker_token_hint: string;
  created_at: Date;
  updated_at: Date;
}
