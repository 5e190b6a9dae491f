import type { Sql, TransactionSql } from "@platform/core";

/** How long a spent nonce is remembered (24 h); far past the 300 s signature window. */
export const NONCE_RETENTION_SECONDS = 86_400;

/** A postgres.js client or transaction handle. */
export type Queryable = Sql | TransactionSql;

/**
 * Spend `(hotkey, nonce)` once, atomically across every replica sharing the database (table
 * `sdk_nonces`, primary key (hotkey, nonce)). True the first time, false for a replay. Key it
 * on the hotkey `verifySignedRequest` RETURNED (canonical ss58), never on the raw header.
 * @example if (!(await reserveNonce(sql, miner.hotkey, miner.nonce))) throw new HttpError(409, "nonce_reused", "...");
 */
export async function reserveNonce(
  sql: Queryable,
  hotkey: string,
  nonce: string,
): Promise<boolean> {
  const rows = await sql`
    insert into sdk_nonces (hotkey, nonce) values (${hotkey}, ${nonce})
    on conflict (hotkey, nonce) do nothing
    returning 1 as reserved`;
  return rows.length === 1;
}

/** Delete spent nonces older than `olderThanSeconds` (24 h by default); returns how many. */
export async function pruneNonces(
  sql: Queryable,
  olderThanSeconds = NONCE_RETENTION_SECONDS,
): Promise<number> {
  const rows = await sql`
    delete from sdk_nonces
    where created_at < now() - make_interval(secs => ${olderThanSeconds}::double precision)
    returning 1`;
  return rows.length;
}
