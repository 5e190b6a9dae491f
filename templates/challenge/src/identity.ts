import { readFileSync } from "node:fs";

/** Who this challenge is: the one file `platform challenge create` fills in (challenge.config.json). */
export interface ChallengeIdentity {
  /** What the master registers it under: lower-case letters, digits and inner hyphens. */
  slug: string;
  /** Display name. */
  name: string;
  /** This challenge's version (GET /version). */
  version: string;
  /** The container image operators run, e.g. ghcr.io/you/shortest-tour:0.1.0; null until you publish one. */
  image: string | null;
  description?: string;
}

// Read at run time rather than imported, so the same path works from src/ (tsx, vitest) and from
// dist/ (the built image): both are one folder below the file.
const file = new URL("../challenge.config.json", import.meta.url);

function load(): ChallengeIdentity {
  const value = JSON.parse(readFileSync(file, "utf8")) as Partial<ChallengeIdentity>;
  for (const key of ["slug", "name", "version"] as const) {
    if (typeof value[key] !== "string" || value[key] === "") {
      throw new Error(`challenge.config.json: "${key}" must be a non-empty string`);
    }
  }
  return value as ChallengeIdentity;
}

/** The contents of challenge.config.json. */
export const identity: ChallengeIdentity = load();
