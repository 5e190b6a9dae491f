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
export { type TestBackendsOptions, testBackends } from "./test-backends.js";
export {
  type CreateTestDatabaseOptions,
  createTestDatabase,
  DEFAULT_TEST_DATABASE_URL,
  testServerUrl,
} from "./test-database.js";
