import { readFile, rm, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";

const held = new Set<string>();

/**
 * Claims an embedded data directory for this process and returns its release. PGlite has no lock
 * of its own, and two PGlites writing one directory corrupt it silently.
 */
export async function lockDataDir(dir: string): Promise<() => Promise<void>> {
  const file = join(dir, "platform.lock");
  const mine = `${process.pid}@${hostname()}`;
  if (held.has(file)) throw alreadyOpen(dir, mine);
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
      const owner = await readFile(file, "utf8").catch(() => "");
      if (attempt > 0 || isLive(owner, mine)) throw alreadyOpen(dir, owner);
      await rm(file, { force: true });
    }
  }
  throw alreadyOpen(dir, "another process");
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

function alreadyOpen(dir: string, owner: string): Error {
  return new Error(
    `The embedded database in ${dir} is already open (${owner}); only one process may open it. ` +
      "Use DATABASE_URL to share a database, or delete platform.lock there if that process is gone.",
  );
}
