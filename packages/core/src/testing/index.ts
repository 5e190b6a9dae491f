/**
 * @platform/core/testing: a fresh database per test or suite, and the backends a suite runs on
 * (real PostgreSQL when it answers, embedded PGlite always), and a version module imported
 * beside a bumped package.json. Kept out of the runtime entry,
 * which production code loads; independent of any test runner.
 */

export { importWithVersion } from "./import-with-version.js";
export { isCi } from "./is-ci.js";
export {
  findPostgresBinaries,
  type PostgresBinaries,
  type PrivatePostgres,
  startPrivatePostgres,
} from "./private-postgres.js";
export { type TestBackendsOptions, testBackends } from "./test-backends.js";
export {
  type CreateTestDatabaseOptions,
  createTestDatabase,
  DEFAULT_TEST_DATABASE_URL,
  testServerUrl,
} from "./test-database.js";
