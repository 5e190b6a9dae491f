import { validatorMigrations } from "@platform/chain";
import { loadMigrations, type Migration } from "@platform/core";

/**
 * The master's SQL migrations: its own `migrations/`, and the validator's tables from
 * @platform/chain as versions 5 and 6 (its in-process validator writes them). This file sits
 * directly under src/, and tsup bundles it into dist/index.js, one level under the package root
 * in both cases, so the same relative URL finds `migrations/` from the sources (tests) and from
 * the published build.
 */
export async function masterMigrations(): Promise<Migration[]> {
  const [own, validator] = await Promise.all([
    loadMigrations(new URL("../migrations/", import.meta.url)),
    validatorMigrations(),
  ]);
  return [...own, ...validator].sort((a, b) => a.version - b.version);
}
