import type { TransactionSql } from "@platform/challenge-sdk";

/**
 * The time a review write happens at: the caller's `now` (tests), else the database's now() (the
 * transaction's start), so replicas agree on issue and expiry times.
 */
export async function databaseTime(tx: TransactionSql, now: Date | undefined): Promise<Date> {
  if (now) return now;
  const [row] = await tx<{ now: Date }[]>`select now() as now`;
  return row!.now;
}
