// The master's database at start. A fresh deployment starts the master beside PostgreSQL
// (`docker-compose up`, a Swarm stack, a host's boot), so the server may not accept connections
// yet: the master waits for it, up to PLATFORM_DATABASE_WAIT_SECONDS, saying at every attempt
// what it waits for (the URL with its password redacted), instead of exiting at once and
// leaving its restart policy to guess. A server that answers and refuses (a wrong password, a
// database that does not exist) is not waited for: waiting would not change the answer.
import { type Database, type Logger, openDatabase, redactDatabaseUrl } from "@platform/core";
import { embeddedDatabaseDir, type MasterConfig } from "./config.js";

/** How long between two attempts (ms). */
const RETRY_MS = 1000;

/**
 * Driver codes that mean "not there yet": the address does not answer or resolve (a container
 * whose name DNS does not know yet), the connection was dropped or timed out, or the server is
 * starting, shutting down or recovering (57P03), or has no connection slot free (53300).
 */
const NOT_READY = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "57P03",
  "53300",
]);

/** Whether an error of `openDatabase` says the server is not up yet (worth another attempt). */
export function databaseNotReady(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && NOT_READY.has(code);
}

/**
 * Open the master's database: the embedded one under the data dir, or PostgreSQL at
 * `config.databaseUrl`, attempted once a second until it accepts connections or
 * `config.databaseWaitSeconds` have passed. Throws a message that names the server (password
 * redacted), how long it waited and the driver's last reason.
 */
export async function openMasterDatabase(config: MasterConfig, log: Logger): Promise<Database> {
  const url = config.databaseUrl;
  if (!url) return openDatabase({ dataDir: embeddedDatabaseDir(config) });
  const started = Date.now();
  const deadline = started + config.databaseWaitSeconds * 1000;
  const where = redactDatabaseUrl(url);
  for (let attempt = 1; ; attempt++) {
    try {
      const database = await openDatabase({ url });
      if (attempt > 1)
        log.info("database: PostgreSQL accepts connections", { database: where, attempt });
      return database;
    } catch (error) {
      const waited = Math.round((Date.now() - started) / 1000);
      if (!databaseNotReady(error)) throw error;
      if (Date.now() >= deadline)
        throw new Error(
          `PostgreSQL at ${where} did not accept connections within ${config.databaseWaitSeconds} s ` +
            `(PLATFORM_DATABASE_WAIT_SECONDS; ${attempt} attempts): ${(error as Error).message}`,
          { cause: error },
        );
      log.warn("database: waiting for PostgreSQL to accept connections", {
        database: where,
        attempt,
        waited_seconds: waited,
        wait_seconds: config.databaseWaitSeconds,
        reason: (error as Error).message,
      });
      const pause = Math.max(0, Math.min(RETRY_MS, deadline - Date.now()));
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}
