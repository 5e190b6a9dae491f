// A new embedded database starts from a snapshot of a cluster fresh from initdb instead of
// running initdb again. initdb is most of what starting PGlite costs (about 1.3 CPU-seconds of a
// 1.6 s start on a 2-core machine; loading the snapshot takes about 0.35 s), and the platform
// starts many: the master and every challenge under `platform dev`, each test database. The
// snapshot is made once, by the first process that needs it, with the same call a new database
// would make (`PGlite.create()`, no options), and kept where PGlite itself is installed
// (`node_modules/.cache/platform-pglite/<version>.tar`, about 40 MB): the same trust as the
// package's own code, and a new PGlite version makes a new one. Where that folder cannot be
// written, every new database runs initdb as before. docs/database.md, "Starting fast".
import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join, sep } from "node:path";
import { PGlite } from "@electric-sql/pglite";

/** The file of a data directory that says a cluster is there (what PGlite itself checks). */
const CLUSTER_MARKER = "PG_VERSION";

/** Where the snapshot for the installed PGlite lives, or undefined when it cannot be told. */
export async function defaultSnapshotPath(): Promise<string | undefined> {
  try {
    const entry = createRequire(import.meta.url).resolve("@electric-sql/pglite");
    const at = entry.lastIndexOf(`${sep}node_modules${sep}`);
    if (at < 0) return undefined;
    const manifest = join(dirname(entry), "..", "package.json");
    const { version } = JSON.parse(await readFile(manifest, "utf8")) as { version?: unknown };
    if (typeof version !== "string" || !/^[0-9A-Za-z.+-]+$/.test(version)) return undefined;
    return join(entry.slice(0, at), "node_modules", ".cache", "platform-pglite", `${version}.tar`);
  } catch {
    return undefined;
  }
}

/**
 * The snapshot's bytes: read from the cache, or made now (and written for the next process,
 * atomically, so a reader never sees half a file). Undefined when there is nowhere to keep it:
 * a snapshot made for one database only would cost more than the initdb it replaces.
 */
export async function initdbSnapshot(path: string | undefined): Promise<Blob | undefined> {
  if (!path) return undefined;
  try {
    return new Blob([await readFile(path)]);
  } catch {
    // Not made yet (or unreadable): make it below.
  }
  try {
    await mkdir(dirname(path), { recursive: true });
    const fresh = await PGlite.create();
    let tar: Blob;
    try {
      tar = await fresh.dumpDataDir("none");
    } finally {
      await fresh.close();
    }
    const partial = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.partial`;
    try {
      await writeFile(partial, new Uint8Array(await tar.arrayBuffer()));
      await rename(partial, path);
    } catch {
      // Not kept (a full disk, say): leave no 40 MB fragment behind. This database still
      // starts from it, which is cheaper than running initdb a second time.
      await rm(partial, { force: true });
    }
    return tar;
  } catch {
    return undefined;
  }
}

/** Forget a snapshot PGlite could not load, so the next process makes a new one. */
export async function discardInitdbSnapshot(path: string): Promise<void> {
  await rm(path, { force: true });
}

/**
 * Whether a data directory may be filled from the snapshot: it holds nothing but `keep` (the
 * platform's lock file). A directory with a cluster resumes it; one with anything else is left
 * to PGlite as it always was.
 */
export async function isEmptyDataDir(dir: string, keep: string): Promise<boolean> {
  const entries = await readdir(dir);
  return !entries.includes(CLUSTER_MARKER) && entries.every((name) => name === keep);
}

/** Empty a data directory a failed snapshot load wrote into, keeping only `keep`. */
export async function clearDataDir(dir: string, keep: string): Promise<void> {
  for (const name of await readdir(dir)) {
    if (name !== keep) await rm(join(dir, name), { recursive: true, force: true });
  }
}
