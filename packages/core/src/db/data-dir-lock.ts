import { readFile, rm, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";

/** Options of {@link lockDataDir}. */
export interface LockDataDirOptions {
  /** The lock file's name inside the directory (default `platform.lock`). */
  file?: string;
}

/** {@link lockDataDir} found the directory held by a live process (this one included). */
export class DataDirLockedError extends Error {
  override readonly name = "DataDirLockedError";
  /** The holder's process id, when the lock file names one. */
  readonly pid: number | undefined;

  constructor(
    readonly dir: string,
    readonly file: string,
    /** What the lock file says: `pid@host`. */
    readonly owner: string,
  ) {
    super(
      `The embedded database in ${dir} is already open (${owner}); only one process may open it. ` +
        `Use DATABASE_URL to share a database, or delete ${file} there if that process is gone.`,
    );
    const pid = Number(owner.split("@")[0]);
    this.pid = Number.isInteger(pid) && pid > 0 ? pid : undefined;
  }
}

/** The lock file's name unless {@link LockDataDirOptions.file} says otherwise. */
export const DATA_DIR_LOCK_FILE = "platform.lock";

const held = new Set<string>();

/**
 * Claim a data directory (which must exist) for this process; resolves to the release. The
 * claim is a file created exclusively (`wx`), so two processes never both win; one left by a
 * process that is gone is taken over. PGlite has no lock of its own, and two PGlites writing
 * one directory corrupt it silently. Throws {@link DataDirLockedError} while another holds it.
 * @example const release = await lockDataDir(dir); try { ... } finally { await release(); }
 */
export async function lockDataDir(
  dir: string,
  options: LockDataDirOptions = {},
): Promise<() => Promise<void>> {
  const name = options.file ?? DATA_DIR_LOCK_FILE;
  const file = join(dir, name);
  const mine = `${process.pid}@${hostname()}`;
  if (held.has(file)) throw new DataDirLockedError(dir, name, mine);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(file, mine, { flag: "wx" });
      held.add(file);
      return async () => {
        held.delete(file);
        await rm(file, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const owner = (await readFile(file, "utf8").catch(() => "")).trim();
      if (attempt > 0 || isLive(owner, mine)) throw new DataDirLockedError(dir, name, owner);
      await rm(file, { force: true });
    }
  }
  throw new DataDirLockedError(dir, name, "another process");
}

/** A lock is live only if its process runs on this host now and is not this process's former self. */
function isLive(owner: string, mine: string): boolean {
  const [pid, host] = owner.split("@");
  // Another host is most often this container before it was recreated; we cannot check it anyway.
  if (host !== hostname() || owner === mine) return false;
  try {
    process.kill(Number(pid), 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
