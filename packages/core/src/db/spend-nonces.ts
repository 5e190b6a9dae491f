import type { Sql, TransactionSql } from "./open-database.js";

/** One signed request's single-use key: the verified hotkey and its nonce. */
export interface NoncePair {
  hotkey: string;
  nonce: string;
}

// Header values never hold NUL, so it cannot join two different pairs into one key.
const keyOf = (pair: NoncePair) => `${pair.hotkey}\u0000${pair.nonce}`;

/**
 * Spend many (hotkey, nonce) pairs in one statement on `table`, a table whose primary key is
 * (hotkey, text) columns `hotkey` and `nonce` (the master's `submission_nonces`, the SDK's
 * `sdk_nonces`). Returns, per pair and in order, true when this call took it: false for a pair
 * already spent, and for every repeat of a pair after its first in the same list. One statement
 * of two arrays whatever the count, so the server prepares it once; atomic as the one-row insert
 * it replaces, on one replica or many. Pair it with `groupCommit` to spend concurrent requests'
 * nonces together.
 */
export async function spendNonces(
  sql: Sql | TransactionSql,
  table: string,
  pairs: readonly NoncePair[],
): Promise<boolean[]> {
  if (pairs.length === 0) return [];
  const first = new Map<string, number>();
  pairs.forEach((pair, i) => {
    const key = keyOf(pair);
    if (!first.has(key)) first.set(key, i);
  });
  const unique = [...first.values()].map((i) => pairs[i] as NoncePair);
  // Sorted: two replicas inserting overlapping pairs (a replayed upload sent to both) then take
  // their row locks in the same order, and wait for each other instead of deadlocking (which
  // would fail every other upload of both batches).
  const rows = await sql<NoncePair[]>`
    insert into ${sql(table)} (hotkey, nonce)
    select hotkey, nonce from unnest(
      ${sql.array(unique.map((pair) => pair.hotkey))}::text[],
      ${sql.array(unique.map((pair) => pair.nonce))}::text[]) as pair (hotkey, nonce)
    order by hotkey, nonce
    on conflict (hotkey, nonce) do nothing
    returning hotkey, nonce`;
  const taken = new Set(rows.map(keyOf));
  return pairs.map((pair, i) => {
    const key = keyOf(pair);
    return first.get(key) === i && taken.has(key);
  });
}
