import type { Sql, TransactionSql } from "@platform/challenge-sdk";
import { expireStale } from "../state/index.js";

// PostgreSQL's "deadlock detected". Lazy expiry moves other submissions' assignments (and so
// locks their submission rows) before this transaction locks its own submission; two such
// transactions can, rarely, wait on each other. PostgreSQL then aborts one: it is run again.
const DEADLOCK_DETECTED = "40P01";
const ATTEMPTS = 3;

/**
 * Runs `body` in one transaction that starts with lazy expiry (every review read and write sees
 * expired assignments as expired), retried when PostgreSQL aborted it for a deadlock.
 */
export async function reviewTransaction<T>(
  sql: Sql,
  now: Date | undefined,
  body: (tx: TransactionSql) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return (await sql.begin(async (tx) => {
        await expireStale(tx, now);
        return body(tx);
      })) as T;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code !== DEADLOCK_DETECTED || attempt >= ATTEMPTS) throw error;
    }
  }
}
