import { existsSync } from "node:fs";
import { loadMigrations, type Migration, migrate, type Sql } from "@platform/core";

/** Namespace the SDK's own tables (nonces, rate limits, jobs) are migrated under. */
export const SDK_NAMESPACE = "sdk";

/**
 * The package's migrations/ folder. This module runs from src/ (workspace, tests), from
 * dist/index.js and, bundled into a subpath entry, from dist/jobs/index.js: each a different
 * depth, so walk up to the folder that holds the package's package.json.
 */
function migrationsFolder(): URL {
  let dir = new URL("./", import.meta.url);
  for (let depth = 0; depth < 4; depth++) {
    if (existsSync(new URL("package.json", dir)) && existsSync(new URL("migrations/", dir))) {
      return new URL("migrations/", dir);
    }
    dir = new URL("../", dir);
  }
  throw new Error(`@platform/challenge-sdk: no migrations/ folder above ${import.meta.url}`);
}

let folder: URL | undefined;

/** Every SDK migration: nonces and rate limits (0001-0009) and the job queue (0010+). */
export function sdkMigrations(): Promise<Migration[]> {
  folder ??= migrationsFolder();
  return loadMigrations(folder);
}

/** Apply the SDK's tables; `start()` does this first. Safe from many processes at once. */
export async function migrateSdk(sql: Sql): Promise<void> {
  await migrate(sql, { namespace: SDK_NAMESPACE, migrations: await sdkMigrations() });
}
