/**
 * The challenge's window secret: what each epoch's scored windows are drawn from
 * (scored-bytes.ts). An operator may set it (`SCORING_WINDOW_SECRET`, 64 hex digits or more: to
 * keep the draws across a database restore, or to share them between challenge databases);
 * otherwise the first instance makes 32 random bytes and stores them, and every replica on the
 * same database reads the same value. It is never logged or served.
 */
import { randomBytes } from "node:crypto";
import type { Sql } from "@platform/challenge-sdk";

const SECRET_NAME = "window_seed";

/** The secret: the configured one, else the stored one, made on first use. */
export async function windowSecret(sql: Sql, configured?: string): Promise<Buffer> {
  if (configured !== undefined && configured !== "") return Buffer.from(configured, "hex");
  // Insert-if-missing then read: two instances starting together agree on the first row written.
  await sql`
    insert into scoring_secrets (name, value) values (${SECRET_NAME}, ${randomBytes(32)})
    on conflict (name) do nothing`;
  const [row] = await sql<{ value: Uint8Array }[]>`
    select value from scoring_secrets where name = ${SECRET_NAME}`;
  if (!row) throw new Error("the window secret could not be stored");
  return Buffer.from(row.value);
}
