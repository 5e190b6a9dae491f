import type { Sql, TransactionSql } from "@platform/core";

/**
 * now() as the database sees it; inside a transaction, the time it started (PostgreSQL's now()).
 * Decide expiries, windows and epochs by this clock, not the process's, so replicas whose clocks
 * drift agree with each other and with the rows.
 * @example const expiresAt = new Date((await databaseNow(tx)).getTime() + ttlSeconds * 1000);
 */
export async function databaseNow(sql: Sql | TransactionSql): Promise<Date> {
  const [row] = await sql<{ now: Date }[]>`select now() as now`;
  return row!.now;
}
