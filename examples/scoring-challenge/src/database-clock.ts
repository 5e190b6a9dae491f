/**
 * The time by the database's clock. A submission's epoch is computed by the database when it is
 * stored; the epoch routes, the default leaderboard and the weights read the same clock, so a
 * replica whose own clock drifts never disagrees with the rows about which epoch is current.
 */
import type { Sql } from "@platform/challenge-sdk";

/** now() as the database sees it. */
export async function databaseNow(sql: Sql): Promise<Date> {
  const [row] = await sql<{ now: Date }[]>`select now() as now`;
  return row!.now;
}
