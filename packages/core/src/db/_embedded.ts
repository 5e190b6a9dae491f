import { mkdir } from "node:fs/promises";
import { resolve } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import {
  clearDataDir,
  defaultSnapshotPath,
  discardInitdbSnapshot,
  initdbSnapshot,
  isEmptyDataDir,
} from "./_initdb-snapshot.js";
import { DATA_DIR_LOCK_FILE, lockDataDir } from "./data-dir-lock.js";

/** A PGlite database listening on loopback, speaking the Postgres wire protocol. */
export interface EmbeddedServer {
  /** Where postgres.js connects: no password, loopback only. */
  url: string;
  /** Stops listening, then closes PGlite (flushing a data directory) and releases its lock. */
  stop(): Promise<void>;
}

/** Starts PGlite in `dataDir` (created if missing) or in memory when `dataDir` is undefined. */
export async function startEmbedded(dataDir: string | undefined): Promise<EmbeddedServer> {
  let location = "memory://";
  let unlock = async () => {};
  if (dataDir !== undefined) {
    location = resolve(dataDir);
    await mkdir(location, { recursive: true });
    unlock = await lockDataDir(location);
  }
  let db: PGlite | undefined;
  try {
    db = await createCluster(
      dataDir === undefined ? undefined : location,
      await defaultSnapshotPath(),
    );
    // One connection only: the server multiplexes every client onto this single PGlite session,
    // so a second client would share its advisory locks and unnamed statements (docs/database.md).
    const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 1 });
    await server.start();
    // Port 0 lets the OS pick a free port; the server reports the one it got.
    const port = Number(server.getServerConn().split(":").pop());
    const opened = db;
    return {
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      async stop() {
        try {
          await server.stop();
          await opened.close();
        } finally {
          await unlock();
        }
      },
    };
  } catch (error) {
    await db?.close().catch(() => {});
    await unlock();
    throw error;
  }
}

/**
 * PGlite in `dir` (in memory when undefined): a new cluster starts from the initdb snapshot at
 * `snapshotPath` (_initdb-snapshot.ts), an existing one resumes. If PGlite cannot load the
 * snapshot, it is discarded, whatever the load wrote is removed, and initdb runs as it would
 * without one.
 */
export async function createCluster(
  dir: string | undefined,
  snapshotPath: string | undefined,
): Promise<PGlite> {
  const location = dir ?? "memory://";
  const fresh = dir === undefined || (await isEmptyDataDir(dir, DATA_DIR_LOCK_FILE));
  const snapshot = fresh ? await initdbSnapshot(snapshotPath) : undefined;
  if (!snapshot || !snapshotPath) return PGlite.create(location);
  try {
    return await PGlite.create(location, { loadDataDir: snapshot });
  } catch {
    await discardInitdbSnapshot(snapshotPath);
    if (dir !== undefined) await clearDataDir(dir, DATA_DIR_LOCK_FILE);
    return PGlite.create(location);
  }
}
