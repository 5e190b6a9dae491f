import { type Migration, migrate, type Sql } from "@platform/core";
import { SDK_NAMESPACE, sdkMigrations } from "../_sdk-migrations.js";

/** The job queue owns versions from this one up; the SDK's other tables use the ones below. */
const FIRST_JOB_VERSION = 10;

/**
 * The job queue's migrations (`migrations/0010_*` and up), recorded under the "sdk" namespace
 * like the rest of the SDK's tables, so `defineChallenge` (which applies them all) and a
 * standalone worker calling `migrateJobQueue` never disagree.
 */
export async function jobQueueMigrations(): Promise<Migration[]> {
  return (await sdkMigrations()).filter((migration) => migration.version >= FIRST_JOB_VERSION);
}

/**
 * Creates or updates the job queue's table (`sdk_jobs`); safe from many processes at once.
 * `defineChallenge` already does this for a challenge; a standalone worker script that opens
 * the database itself can call it before `runWorker`.
 * @example await migrateJobQueue(db.sql);
 */
export async function migrateJobQueue(sql: Sql): Promise<void> {
  await migrate(sql, { namespace: SDK_NAMESPACE, migrations: await jobQueueMigrations() });
}
