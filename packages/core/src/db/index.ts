export { DataDirLockedError, type LockDataDirOptions, lockDataDir } from "./data-dir-lock.js";
export { type GroupCommitOptions, groupCommit } from "./group-commit.js";
export { loadMigrations, type Migration } from "./load-migrations.js";
export { type MigrateOptions, type MigrateResult, migrate, migrationChecksum } from "./migrate.js";
export {
  type Backend,
  type Database,
  DEFAULT_DATA_DIR,
  type OpenDatabaseOptions,
  openDatabase,
  type Sql,
  type TransactionSql,
} from "./open-database.js";
export { redactDatabaseUrl } from "./redact-url.js";
export { type NoncePair, spendNonces } from "./spend-nonces.js";
