import postgres from "postgres";
import type { Sql } from "./open-database.js";
import { redactDatabaseUrl, redactSecrets } from "./redact-url.js";

export interface ConnectOptions {
  /** Pool size. */
  max: number;
  /** Seconds to wait for the server before giving up. */
  connectTimeout?: number;
  /** Keep one connection open for the client's whole life (the embedded backend). */
  pinned?: boolean;
}

/** Opens a postgres.js client and proves it can query, or throws a message with no password. */
export async function connect(url: string, options: ConnectOptions): Promise<Sql> {
  let sql: Sql | undefined;
  try {
    sql = postgres(url, {
      max: options.max,
      connect_timeout: options.connectTimeout ?? 10,
      // postgres.js prints NOTICEs with console.log by default, which corrupts CLI output.
      onnotice: () => {},
      // The embedded server accepts one connection; never drop and redial it (see docs/database.md).
      ...(options.pinned ? { idle_timeout: 0, max_lifetime: null } : {}),
    });
    await sql`select 1`;
    return sql;
  } catch (error) {
    await sql?.end({ timeout: 0 }).catch(() => {});
    throw connectionError(url, error);
  }
}

/**
 * An Error naming the target (password redacted) and the driver's reason (password removed),
 * with the driver's `code` (ECONNREFUSED, CONNECT_TIMEOUT, a SQLSTATE such as 57P03) kept, so
 * a caller can tell a server not up yet from one that refuses it.
 */
export function connectionError(url: string, error: unknown): Error & { code?: string } {
  const code = (error as { code?: unknown } | null)?.code;
  const raw = error instanceof Error ? error.message || String(code) : String(error);
  const wrapped = new Error(
    `Could not connect to PostgreSQL at ${redactDatabaseUrl(url)}: ${redactSecrets(raw, url)}`,
  );
  return typeof code === "string" ? Object.assign(wrapped, { code }) : wrapped;
}
