import { join } from "node:path";
import { platformHome } from "./_keystore.js";

/** Where a validator keeps its database unless told: PLATFORM_HOME/validator. */
export function defaultValidatorDataDir(): string {
  return join(platformHome(), "validator");
}

/** Flags every validator command shares: its database. */
export const validatorDatabaseFlags = {
  "data-dir": {
    type: "string",
    description:
      "Where the validator's embedded database lives (default: ~/.platform/validator, or PLATFORM_HOME/validator)",
    valueHint: "dir",
  },
  "database-url": {
    type: "string",
    description: "A PostgreSQL URL instead of the embedded database (default: DATABASE_URL)",
    valueHint: "url",
  },
} as const;

/** The embedded database's folder, or null when the validator uses a PostgreSQL URL. */
export function validatorDataDir(args: { "data-dir"?: string; "database-url"?: string }) {
  if (args["database-url"] || process.env.DATABASE_URL) return null;
  return args["data-dir"] ?? defaultValidatorDataDir();
}

/** Open the validator's database (embedded unless a URL is given) with its migrations applied. */
export async function openValidatorDatabase(args: {
  "data-dir"?: string;
  "database-url"?: string;
}) {
  const { openDatabase, migrate } = await import("@platform/core");
  const url = args["database-url"] || process.env.DATABASE_URL;
  const dataDir = validatorDataDir(args);
  const database = await openDatabase(url ? { url } : { dataDir: dataDir ?? "" });
  // The chain package (@polkadot/api) only once the database is ours: a status beside a running
  // validator finds the lock first, and reads its status file without loading it.
  const { validatorMigrations } = await import("@platform/chain");
  await migrate(database.sql, { namespace: "validator", migrations: await validatorMigrations() });
  return database;
}
