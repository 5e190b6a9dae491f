import { createHash } from "node:crypto";
import { checkMigrations, type Migration } from "./load-migrations.js";
import type { Sql } from "./open-database.js";

/** What `migrate` applies, and under which namespace (usually the package name) it records it. */
export interface MigrateOptions {
  namespace: string;
  migrations: readonly Migration[];
}

/** The migrations this run applied, in order; empty when the database was already current. */
export interface MigrateResult {
  applied: { version: number; name: string }[];
}

/** Classid half of every advisory lock taken here, so they never collide with other locks. */
const LOCK_CLASS = "platform_migrations";

/** The checksum recorded for a migration: sha256 of its text with line endings normalised. */
export function migrationChecksum(sql: string): string {
  // CRLF vs LF (git autocrlf) is not a change to the migration.
  return createHash("sha256").update(sql.replace(/\r\n/g, "\n")).digest("hex");
}

/**
 * Applies pending migrations once, in version order, in one transaction holding an advisory lock on
 * the namespace, and records them in `platform_migrations`. Safe to run from many processes at once.
 * Throws if an applied migration's text changed; a failing migration leaves nothing applied.
 * @example await migrate(db.sql, { namespace: "master", migrations: await loadMigrations(dir) });
 */
export async function migrate(sql: Sql, options: MigrateOptions): Promise<MigrateResult> {
  const { namespace } = options;
  if (!namespace) throw new Error("migrate: `namespace` must be a non-empty string");
  const migrations = checkMigrations(options.migrations);
  await ensureTable(sql);
  return sql.begin(async (tx) => {
    // Held until commit or rollback: a second runner waits here, then finds everything recorded.
    await tx`select pg_advisory_xact_lock(hashtext(${LOCK_CLASS}), hashtext(${namespace}))`;
    const rows = await tx<{ version: number; checksum: string }[]>`
      select version, checksum from platform_migrations where namespace = ${namespace}`;
    const recorded = new Map(rows.map((row) => [row.version, row.checksum]));
    const applied: MigrateResult["applied"] = [];
    for (const migration of migrations) {
      const label = `${namespace}/${String(migration.version).padStart(4, "0")}_${migration.name}`;
      const checksum = migrationChecksum(migration.sql);
      const previous = recorded.get(migration.version);
      if (previous !== undefined) {
        if (previous !== checksum) {
          throw new Error(
            `Migration ${label} changed after it was applied (recorded checksum ${previous.slice(0, 12)}, ` +
              `now ${checksum.slice(0, 12)}). Never edit an applied migration: add a new one.`,
          );
        }
        continue;
      }
      try {
        await tx.unsafe(migration.sql);
      } catch (error) {
        const reason = (error as Error).message;
        throw new Error(`Migration ${label} failed, so this whole run was rolled back: ${reason}`, {
          cause: error,
        });
      }
      await tx`
        insert into platform_migrations (namespace, version, name, checksum)
        values (${namespace}, ${migration.version}, ${migration.name}, ${checksum})`;
      applied.push({ version: migration.version, name: migration.name });
    }
    return { applied };
  });
}

/** Creates the record table once; a global lock stops two first runs racing on CREATE TABLE. */
async function ensureTable(sql: Sql): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtext(${LOCK_CLASS}), 0)`;
    const [row] = await tx<{ exists: boolean }[]>`
      select to_regclass('platform_migrations') is not null as exists`;
    if (row?.exists) return;
    await tx`
      create table platform_migrations (
        namespace text not null,
        version integer not null,
        name text not null,
        checksum text not null,
        applied_at timestamptz not null default now(),
        primary key (namespace, version)
      )`;
  });
}
