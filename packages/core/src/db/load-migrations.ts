import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** One numbered SQL migration. `version` orders them; its text is checksummed once applied. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

const FILE_NAME = /^(\d{4})_([\w-]+)\.sql$/;

/**
 * Reads `NNNN_name.sql` files from a folder, in version order. Any other `.sql` file there, or two
 * files with one version, is an error rather than a migration silently skipped.
 * @example const migrations = await loadMigrations(new URL("../migrations/", import.meta.url));
 */
export async function loadMigrations(dir: string | URL): Promise<Migration[]> {
  const path = typeof dir === "string" ? dir : fileURLToPath(dir);
  let entries: string[];
  try {
    entries = await readdir(path);
  } catch (error) {
    throw new Error(`Cannot read migrations folder ${path}: ${(error as Error).message}`);
  }
  const migrations: Migration[] = [];
  for (const file of entries.filter((entry) => entry.endsWith(".sql")).sort()) {
    const match = FILE_NAME.exec(file);
    if (!match) {
      throw new Error(
        `Migration file ${join(path, file)} must be named NNNN_name.sql (e.g. 0001_init.sql)`,
      );
    }
    const sql = await readFile(join(path, file), "utf8");
    migrations.push({ version: Number(match[1]), name: match[2]!, sql });
  }
  return checkMigrations(migrations);
}

/** Returns the migrations sorted by version; throws on a duplicate or invalid version. */
export function checkMigrations(migrations: readonly Migration[]): Migration[] {
  const sorted = [...migrations].sort((a, b) => a.version - b.version);
  sorted.forEach((migration, i) => {
    if (!Number.isSafeInteger(migration.version) || migration.version < 1) {
      throw new Error(`Migration "${migration.name}" has invalid version ${migration.version}`);
    }
    const previous = sorted[i - 1];
    if (previous?.version === migration.version) {
      throw new Error(
        `Two migrations share version ${migration.version}: "${previous.name}" and "${migration.name}"`,
      );
    }
  });
  return sorted;
}
