import type { TransactionSql } from "@platform/challenge-sdk";

/**
 * The time a state change happens at: the caller's `now` (tests, replays), else the database's
 * now() (the transaction's start), so several replicas agree on expiry.
 */
export async function transitionTime(tx: TransactionSql, now: Date | undefined): Promise<Date> {
  if (now) return now;
  const [row] = await tx<{ now: Date }[]>`select now() as now`;
  return row!.now;
}
