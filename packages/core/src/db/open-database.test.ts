import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { testBackends } from "../testing/test-backends.js";
import { testServerUrl } from "../testing/test-database.js";
import {
  type Backend,
  type Database,
  type OpenDatabaseOptions,
  openDatabase,
} from "./open-database.js";

const optionsFor = (backend: Backend): OpenDatabaseOptions =>
  backend === "postgres" ? { url: testServerUrl() } : { memory: true, env: {} };

describe.each(await testBackends())("openDatabase on %s", (backend) => {
  it("queries through postgres.js, runs transactions, and closes idempotently", async () => {
    const db = await openDatabase(optionsFor(backend));
    expect(db.backend).toBe(backend);
    expect(db.url).toMatch(/^postgres:\/\//);
    const [row] = await db.sql<{ sum: number; greeting: string }[]>`
      select ${20}::int + ${22}::int as sum, ${"hello"}::text as greeting`;
    expect(row).toEqual({ sum: 42, greeting: "hello" });

    const inTx = await db.sql.begin(async (tx) => {
      await tx`create temporary table scratch (n int) on commit drop`;
      await tx`insert into scratch values (1), (2)`;
      return (await tx<{ n: number }[]>`select count(*)::int as n from scratch`)[0]?.n;
    });
    expect(inTx).toBe(2);

    await db.close();
    await db.close();
    await expect(db.sql`select 1`).rejects.toThrow(/CONNECTION_ENDED/);
  });
});

describe.runIf((await testBackends()).includes("postgres"))("openDatabase on a server URL", () => {
  it("falls back to DATABASE_URL when no url is given", async () => {
    const db = await openDatabase({ env: { DATABASE_URL: testServerUrl() }, memory: true });
    try {
      expect(db.backend).toBe("postgres");
      expect(db.url).toBe(testServerUrl());
    } finally {
      await db.close();
    }
  });
});

describe("openDatabase errors", () => {
  it("names the host but never the password when it cannot connect", async () => {
    const error = await openDatabase({ url: "postgres://app:hunter2@127.0.0.1:1/app" }).catch(
      (e) => e,
    );
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toContain(
      "Could not connect to PostgreSQL at postgres://app:***@127.0.0.1:1/app",
    );
    expect(error.message).toContain("ECONNREFUSED");
    expect(error.message).not.toContain("hunter2");
  });

  it("refuses memory and dataDir together", async () => {
    await expect(openDatabase({ memory: true, dataDir: "/tmp/x", env: {} })).rejects.toThrow(
      /either `memory: true` or `dataDir`/,
    );
  });
});

describe("openDatabase embedded (pglite)", () => {
  const dirs: string[] = [];
  const opened: Database[] = [];
  afterAll(async () => {
    await Promise.all(opened.map((db) => db.close()));
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it("keeps data in dataDir across close and reopen", async () => {
    const root = await mkdtemp(join(tmpdir(), "platform-db-"));
    dirs.push(root);
    const dataDir = join(root, "nested", "pglite");

    const first = await openDatabase({ dataDir, env: {} });
    opened.push(first);
    expect(first.backend).toBe("pglite");
    expect(first.url).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
    await first.sql`create table kept (note text)`;
    await first.sql`insert into kept values ('survives')`;
    // Two PGlites on one directory would corrupt it: the second open is refused while it is held.
    await expect(openDatabase({ dataDir, env: {} })).rejects.toThrow(/already open/);
    await first.close();
    const files = await readdir(dataDir);
    expect(files).toContain("PG_VERSION");
    expect(files).not.toContain("platform.lock");

    const second = await openDatabase({ dataDir, env: {} });
    opened.push(second);
    expect(await second.sql`select note from kept`).toEqual([{ note: "survives" }]);
    await second.close();
  });

  it("serialises work on its single connection and turns LISTEN into an error, not a hang", async () => {
    const db = await openDatabase({ memory: true, env: {} });
    opened.push(db);
    await db.sql`create table counter (n int)`;
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tx = db.sql.begin(async (t) => {
      await t`insert into counter values (1)`;
      await held;
    });
    // Queued behind the open transaction, so it can only ever see the committed row.
    const read = db.sql<{ n: number }[]>`select count(*)::int as n from counter`;
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    await tx;
    expect((await read)[0]?.n).toBe(1);

    await expect(db.sql.listen("channel", () => {})).rejects.toThrow(/needs a PostgreSQL server/);
  });
});
