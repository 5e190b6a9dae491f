import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { CliError } from "./_shared.js";

/** The lock `platform dev` keeps in its data dir: `pid@host` of the run that holds it. */
export const DEV_LOCK_FILE = "platform-dev.pid";

/**
 * Take the data dir for this run: refuse one another `platform dev` holds (the embedded
 * databases are single-process), then, for the default dir, empty it. The claim is core's
 * data-dir lock (created exclusively, a dead holder's taken over), and it is taken BEFORE
 * anything is deleted, so two runs starting at once can never empty each other's state.
 * Resolves to the release.
 */
export async function claimDevDataDir(
  dataDir: string,
  fresh: boolean,
): Promise<() => Promise<void>> {
  const { DataDirLockedError, lockDataDir } = await import("@platform/core");
  mkdirSync(dataDir, { recursive: true });
  let release: () => Promise<void>;
  try {
    release = await lockDataDir(dataDir, { file: DEV_LOCK_FILE });
  } catch (error) {
    if (!(error instanceof DataDirLockedError)) throw error;
    throw new CliError(
      `${dataDir} is in use by another platform dev (pid ${error.pid ?? error.owner}); stop it, or pass another --data-dir`,
    );
  }
  if (fresh) {
    for (const entry of readdirSync(dataDir)) {
      if (entry !== DEV_LOCK_FILE) rmSync(join(dataDir, entry), { recursive: true, force: true });
    }
  }
  return release;
}
