import type postgres from "postgres";
import { connect } from "./_connect.js";
import { startEmbedded } from "./_embedded.js";

/** A postgres.js client: the `sql` tagged template every package queries through. */
export type Sql = postgres.Sql;

/** The handle inside `sql.begin(async (tx) => ...)`: query with it, never with the outer `sql`. */
export type TransactionSql = postgres.TransactionSql;

/** Which engine answers: a real PostgreSQL server, or embedded PGlite. */
export type Backend = "postgres" | "pglite";

/** Where `openDatabase` connects; see docs/database.md. */
export interface OpenDatabaseOptions {
  /** A `postgres://` URL. Defaults to `DATABASE_URL`; with neither, the embedded PGlite is used. */
  url?: string;
  /** Data directory of the embedded database (default `.platform/pglite` under the cwd). */
  dataDir?: string;
  /** Keep the embedded database in memory only: nothing is written, everything is lost on close. */
  memory?: boolean;
  /** Pool size on a real server (default 10). The embedded backend always uses exactly 1. */
  max?: number;
  /** Where `DATABASE_URL` is read from (default `process.env`). */
  env?: Record<string, string | undefined>;
}

/** An open database: query with `sql`, release with `close()`. */
export interface Database {
  /** The postgres.js tagged template; the same code path on both backends. */
  sql: Sql;
  /** Which engine answers. */
  backend: Backend;
  /** The URL `sql` is connected to. It may hold a password: log `redactDatabaseUrl(url)`. */
  url: string;
  /** Ends the client, then the embedded server and PGlite if any. Safe to call twice. */
  close(): Promise<void>;
}

/** Default directory of the embedded database, relative to the working directory. */
export const DEFAULT_DATA_DIR = ".platform/pglite";

/**
 * Opens the database: PostgreSQL at `url` or `DATABASE_URL`, else embedded PGlite served over a
 * loopback socket, so one postgres.js code path runs on both. Fails fast if it cannot query.
 * @example const db = await openDatabase({ memory: true }); await db.sql`select 1`; await db.close();
 */
export async function openDatabase(options: OpenDatabaseOptions = {}): Promise<Database> {
  const url = options.url || (options.env ?? process.env)["DATABASE_URL"] || undefined;
  if (url) {
    const sql = await connect(url, { max: options.max ?? 10 });
    return handle(sql, "postgres", url, async () => {});
  }
  if (options.memory && options.dataDir !== undefined) {
    throw new Error("openDatabase: pass either `memory: true` or `dataDir`, not both");
  }
  const server = await startEmbedded(
    options.memory ? undefined : (options.dataDir ?? DEFAULT_DATA_DIR),
  );
  try {
    // max 1: PGlite is one session; see docs/database.md for why and what it means.
    const sql = await connect(server.url, { max: 1, pinned: true });
    // These open a second connection, which the embedded server refuses in a way postgres.js
    // never reports: fail loudly instead of hanging.
    const unsupported = (what: string) => () =>
      Promise.reject(new Error(`sql.${what}() needs a PostgreSQL server; set DATABASE_URL`));
    Object.assign(sql, { listen: unsupported("listen"), subscribe: unsupported("subscribe") });
    return handle(sql, "pglite", server.url, server.stop);
  } catch (error) {
    await server.stop();
    throw error;
  }
}

function handle(sql: Sql, backend: Backend, url: string, after: () => Promise<void>): Database {
  let closing: Promise<void> | undefined;
  const close = async () => {
    try {
      await sql.end({ timeout: 5 });
    } finally {
      await after();
    }
  };
  return { sql, backend, url, close: () => (closing ??= close()) };
}
