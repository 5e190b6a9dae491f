import { randomBytes } from "node:crypto";
// The runtime database layer by the package's own name, so the built testing entry shares it
// with the runtime entry instead of bundling a second copy; only the connect helper is local.
import { type Backend, type Database, openDatabase, type Sql } from "@platform/core";
import { connect } from "../db/_connect.js";

/** Server the "postgres" test backend creates its databases on, unless `TEST_DATABASE_URL` is set. */
export const DEFAULT_TEST_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/postgres";

/** Which backend to create a test database on; `url` overrides `TEST_DATABASE_URL`. */
export interface CreateTestDatabaseOptions {
  backend: Backend;
  url?: string;
}

/** The server URL test databases are created on: `TEST_DATABASE_URL`, else the local default. */
export function testServerUrl(env: Record<string, string | undefined> = process.env): string {
  return env["TEST_DATABASE_URL"] || DEFAULT_TEST_DATABASE_URL;
}

/**
 * A fresh, empty database for one test (or suite); `close()` destroys it. On "postgres" it is a new
 * `platform_test_<random>` database on the test server, dropped WITH (FORCE) on close; on "pglite"
 * an in-memory embedded one. Independent of any test runner.
 * @example const db = await createTestDatabase({ backend: "postgres" }); ...; await db.close();
 */
export async function createTestDatabase(options: CreateTestDatabaseOptions): Promise<Database> {
  // env: {} so a DATABASE_URL in the environment can never turn a "pglite" test into a real one.
  if (options.backend === "pglite") return openDatabase({ memory: true, env: {} });
  const serverUrl = options.url ?? testServerUrl();
  const name = `platform_test_${randomBytes(6).toString("hex")}`;
  // template0 is pristine and nobody may connect to it, so creation never sees leftovers or
  // fails with "source database is being accessed by other users".
  await onServer(serverUrl, (sql) => sql.unsafe(`create database "${name}" template template0`));
  const drop = () =>
    onServer(serverUrl, (sql) => sql.unsafe(`drop database if exists "${name}" with (force)`));
  let db: Database;
  try {
    db = await openDatabase({ url: withDatabase(serverUrl, name), max: 4 });
  } catch (error) {
    await drop();
    throw error;
  }
  let closing: Promise<void> | undefined;
  const close = async () => {
    try {
      await db.close();
    } finally {
      await drop();
    }
  };
  return { ...db, close: () => (closing ??= close()) };
}

/** Runs one statement on a short-lived single connection to the server's maintenance database. */
async function onServer(url: string, run: (sql: Sql) => Promise<unknown>) {
  const sql = await connect(url, { max: 1, connectTimeout: 5 });
  try {
    await run(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}
