// A fresh database with this challenge's migrations applied (after the SDK's), for tests of the
// modules that query it: the SDK's testDatabase, on either backend.
import type { Sql } from "@platform/challenge-sdk";
import { testDatabase } from "@platform/challenge-sdk/testing";

/** A migrated database on `backend`; `close` drops it. */
export function scoringDatabase(
  backend: "postgres" | "pglite",
): Promise<{ sql: Sql; close: () => Promise<void> }> {
  return testDatabase(new URL("../migrations/", import.meta.url), { backend });
}

/** Insert a submission row with defaults for everything the test does not care about. */
export async function insertSubmission(
  sql: Sql,
  row: {
    hotkey?: string;
    status?: string;
    codeHash?: string;
    epochId?: number;
    createdAt?: Date;
  } = {},
): Promise<string> {
  const status = row.status ?? "pending";
  const [inserted] = await sql<{ id: string }[]>`
    insert into submissions (hotkey, epoch_id, status, via, filename, code_hash, bundle, held_at, created_at)
    values (${row.hotkey ?? "5Hotkey"}, ${row.epochId ?? 1}, ${status}, 'signed', 'bundle.zip',
            ${row.codeHash ?? "0".repeat(64)}, ${Buffer.from("PK")},
            ${status === "held" ? new Date() : null}, ${row.createdAt ?? new Date()})
    returning id`;
  return inserted!.id;
}
