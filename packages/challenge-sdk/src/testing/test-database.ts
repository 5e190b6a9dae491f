import {
  type Backend,
  type Database,
  loadMigrations,
  type Migration,
  migrate,
} from "@platform/core";
import { createTestDatabase } from "@platform/core/testing";
import { migrateSdk } from "../_sdk-migrations.js";

/** Options of {@link testDatabase}. */
export interface TestDatabaseOptions {
  /** A fresh PostgreSQL database on TEST_DATABASE_URL, or in-memory PGlite (the default). */
  backend?: Backend;
  /** The namespace the migrations are recorded under (a challenge uses its slug); "challenge". */
  namespace?: string;
}

/**
 * A fresh database for a test, migrated as a started challenge's is: the SDK's tables
 * (`sdk_rate_limits`, the job queue...) and then `migrations` (a folder URL or path of
 * NNNN_name.sql files, or a list: what `defineChallenge` takes). `close()` drops it. For tests
 * of the modules that query your tables, without starting the challenge.
 * @example const db = await testDatabase(new URL("../migrations/", import.meta.url), { backend }); ...; await db.close();
 */
export async function testDatabase(
  migrations: URL | string | readonly Migration[],
  options: TestDatabaseOptions = {},
): Promise<Database> {
  const list = Array.isArray(migrations)
    ? (migrations as readonly Migration[])
    : await loadMigrations(migrations as URL | string);
  const db = await createTestDatabase({ backend: options.backend ?? "pglite" });
  try {
    await migrateSdk(db.sql);
    await migrate(db.sql, { namespace: options.namespace ?? "challenge", migrations: list });
  } catch (error) {
    await db.close();
    throw error;
  }
  return db;
}
