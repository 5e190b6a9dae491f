// The master waits for PostgreSQL at start: a port that refuses connections until, a few
// seconds in, a TCP proxy in front of the real test server starts answering on it, as a
// database container does on a fresh `docker-compose up`. And it gives up, clearly, after
// PLATFORM_DATABASE_WAIT_SECONDS; and does not wait for a server that answers "no".
import { createServer, type Server, Socket } from "node:net";
import { createLogger } from "@platform/core";
import { DEFAULT_TEST_DATABASE_URL, testBackends } from "@platform/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import { loadMasterConfig } from "./config.js";
import { openMasterDatabase } from "./open-master-database.js";

const ADMIN_TOKEN = "a".repeat(32);
// The test server trusts loopback: this password is ignored by it, and must appear nowhere.
const PASSWORD = "never-logged-pa55word";
const server = new URL(process.env["TEST_DATABASE_URL"] || DEFAULT_TEST_DATABASE_URL);
const realServer = (await testBackends()).includes("postgres");

function recordingLog() {
  const lines: string[] = [];
  const log = createLogger({ name: "master-test", level: "debug", write: (l) => lines.push(l) });
  return { log, lines };
}

/** A port nothing listens on (yet). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** A TCP proxy on `port` to the test server: PostgreSQL answering there from now on. */
function proxyTo(port: number): Promise<Server> {
  const proxy = createServer((client) => {
    const upstream = new Socket();
    upstream.connect(Number(server.port || 5432), server.hostname);
    client.pipe(upstream).pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  return new Promise((resolve, reject) => {
    proxy.once("error", reject);
    proxy.listen(port, "127.0.0.1", () => resolve(proxy));
  });
}

function configFor(port: number, database: string, waitSeconds: number) {
  const user = server.username || "postgres";
  return loadMasterConfig(
    {},
    {
      ADMIN_TOKEN,
      DATABASE_URL: `postgres://${user}:${PASSWORD}@127.0.0.1:${port}/${database}`,
      PLATFORM_DATABASE_WAIT_SECONDS: String(waitSeconds),
    },
  );
}

describe("the master's database at start", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it.skipIf(!realServer)(
    "waits for a PostgreSQL that starts late, logging each attempt without the password",
    async () => {
      const port = await freePort();
      const { log, lines } = recordingLog();
      const started = Date.now();
      const late = new Promise<Server>((resolve, reject) =>
        setTimeout(() => proxyTo(port).then(resolve, reject), 2500),
      );
      cleanups.push(async () => {
        const proxy = await late;
        await new Promise((resolve) => proxy.close(resolve));
      });
      const database = await openMasterDatabase(
        configFor(port, server.pathname.slice(1) || "postgres", 30),
        log,
      );
      cleanups.push(() => database.close());
      expect(Date.now() - started).toBeGreaterThanOrEqual(2400);
      expect(database.backend).toBe("postgres");
      expect(await database.sql`select 1 as one`).toEqual([{ one: 1 }]);

      const waits = lines.filter((line) => line.includes("waiting for PostgreSQL"));
      expect(waits.length).toBeGreaterThanOrEqual(2);
      const first = JSON.parse(waits[0] ?? "{}") as Record<string, unknown>;
      // The URL with its password cut (the logger's own redaction shows it as [redacted]).
      expect(first).toMatchObject({ level: "warn", attempt: 1, wait_seconds: 30 });
      expect(String(first["database"])).toMatch(
        new RegExp(`^postgres://\\w+:(\\*\\*\\*|\\[redacted\\])@127\\.0\\.0\\.1:${port}/\\w+$`),
      );
      expect(String(first["reason"])).toContain("ECONNREFUSED");
      expect(lines.some((line) => line.includes("PostgreSQL accepts connections"))).toBe(true);
      for (const line of lines) expect(line).not.toContain(PASSWORD);
    },
    40_000,
  );

  it("gives up after PLATFORM_DATABASE_WAIT_SECONDS with an error naming the server and the bound", async () => {
    const port = await freePort();
    const { log, lines } = recordingLog();
    const started = Date.now();
    const error = await openMasterDatabase(configFor(port, "platform", 2), log).then(
      () => new Error("connected to nothing"),
      (thrown: Error) => thrown,
    );
    const elapsed = Date.now() - started;
    expect(error.message).toMatch(
      new RegExp(
        `^PostgreSQL at postgres://\\w+:\\*\\*\\*@127\\.0\\.0\\.1:${port}/platform did not accept connections within 2 s \\(PLATFORM_DATABASE_WAIT_SECONDS; \\d attempts\\): .*ECONNREFUSED`,
      ),
    );
    expect(error.message).not.toContain(PASSWORD);
    // Not before the bound; that it stops at all is the message's attempt count and the test's
    // timeout (no absolute upper bound: a loaded machine slows each attempt).
    expect(elapsed).toBeGreaterThanOrEqual(1900);
    expect(lines.filter((line) => line.includes("waiting for PostgreSQL")).length).toBeGreaterThan(
      0,
    );
    for (const line of lines) expect(line).not.toContain(PASSWORD);
  }, 20_000);

  it.skipIf(!realServer)(
    "does not wait for a server that answers and refuses (a database that does not exist)",
    async () => {
      const { log, lines } = recordingLog();
      const started = Date.now();
      const port = Number(server.port || 5432);
      const error = await openMasterDatabase(
        configFor(port, "platform_no_such_database_here", 30),
        log,
      ).then(
        () => new Error("connected to a database that does not exist"),
        (thrown: Error) => thrown,
      );
      expect(error.message).toMatch(/Could not connect to PostgreSQL at .*: .*does not exist/);
      expect(error.message).not.toContain(PASSWORD);
      // Every wait logs a line: none means it did not wait. And it answered well inside its
      // 30 s bound (relative to the bound, not a figure for this machine).
      expect(lines.filter((line) => line.includes("waiting for PostgreSQL"))).toEqual([]);
      expect(Date.now() - started).toBeLessThan((30 * 1000) / 2);
    },
    20_000,
  );
});
