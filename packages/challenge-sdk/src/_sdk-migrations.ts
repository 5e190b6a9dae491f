import { loadMigrations, type Migration, migrate, type Sql } from "@platform/core";

/** Namespace the SDK's own tables (nonces, rate limits, jobs) are migrated under. */
export const SDK_NAMESPACE = "sdk";

// From src/ (workspace, tests) and from dist/ (published) alike this is the package's folder.
const folder = new URL("../migrations/", import.meta.url);

/** Every SDK migration: nonces and rate limits (0001-0009) and the job queue (0010+). */
export function sdkMigrations(): Promise<Migration[]> {
  return loadMigrations(folder);
}

/** Apply the SDK's tables; `defineChallenge` does this at init. Safe from many processes at once. */
export async function migrateSdk(sql: Sql): Promise<void> {
  await migrate(sql, { namespace: SDK_NAMESPACE, migrations: await sdkMigrations() });
}
