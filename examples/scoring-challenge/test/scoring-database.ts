// A fresh database with this challenge's migrations applied, for tests of the modules that
// query it. It starts a bare challenge (these migrations, no routes) through the SDK's testing
// kit, which is how an outside author gets a migrated test database on either backend.
import { defineChallenge, type Sql } from "@platform/challenge-sdk";
import { startTestChallenge, type TestChallenge } from "@platform/challenge-sdk/testing";

const schemaOnly = defineChallenge({
  slug: "scoring-schema",
  version: "0.0.0",
  migrations: new URL("../migrations/", import.meta.url),
  weights: () => ({ epoch: null, weights: {} }),
});

/** A migrated database on `backend`; `close` drops it. */
export async function scoringDatabase(
  backend: "postgres" | "pglite",
): Promise<{ sql: Sql; close: () => Promise<void> }> {
  const t: TestChallenge<unknown> = await startTestChallenge(schemaOnly, { backend });
  return { sql: t.sql, close: () => t.close() };
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
