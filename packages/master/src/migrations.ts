import { loadMigrations, type Migration } from "@platform/core";

/**
 * The master's SQL migrations. This file sits directly under src/, and tsup bundles it into
 * dist/index.js, one level under the package root in both cases, so the same relative URL
 * finds `migrations/` from the sources (tests) and from the published build.
 */
export function masterMigrations(): Promise<Migration[]> {
  return loadMigrations(new URL("../migrations/", import.meta.url));
}
