import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testBackends } from "../testing/test-backends.js";
import { createTestDatabase } from "../testing/test-database.js";
import { loadMigrations, type Migration } from "./load-migrations.js";
import { migrate, migrationChecksum } from "./migrate.js";
import type { Database } from "./open-database.js";

let counter = 0;
/** A namespace and table of its own, so tests sharing one database never see each other. */
function fresh() {
  const ns = `ns_${process.pid}_${++counter}`;
  const migrations: Migration[] = [
    {
      version: 1,
      name: "create",
      sql: `create table ${ns}_items (id int primary key, note text);`,
    },
    { version: 2, name: "seed", sql: `insert into ${ns}_items values (1, 'seeded');` },
  ];
  return { ns, table: `${ns}_items`, migrations };
}

describe.each(await testBackends())("migrate on %s", (backend) => {
  let db: Database;
  beforeAll(async () => {
    db = await createTestDatabase({ backend });
  });
  afterAll(() => db?.close());

  const count = async (table: string) =>
    (await db.sql<{ n: number }[]>`select count(*)::int as n from ${db.sql(table)}`)[0]?.n;
  const recorded = (ns: string) =>
    db.sql<{ version: number; name: string; checksum: string }[]>`
      select version, name, checksum from platform_migrations where namespace = ${ns} order by version`;

  it("applies pending migrations once, in order, and records them", async () => {
    const { ns, table, migrations } = fresh();
    // Given out of order: the version, not the array position, decides.
    const result = await migrate(db.sql, { namespace: ns, migrations: [...migrations].reverse() });
    expect(result.applied).toEqual([
      { version: 1, name: "create" },
      { version: 2, name: "seed" },
    ]);
    expect(await count(table)).toBe(1);
    expect(await recorded(ns)).toEqual([
      { version: 1, name: "create", checksum: migrationChecksum(migrations[0]!.sql) },
      { version: 2, name: "seed", checksum: migrationChecksum(migrations[1]!.sql) },
    ]);
  });

  it("is a no-op when re-run, and applies only what was added since", async () => {
    const { ns, table, migrations } = fresh();
    await migrate(db.sql, { namespace: ns, migrations });
    expect((await migrate(db.sql, { namespace: ns, migrations })).applied).toEqual([]);
    expect(await count(table)).toBe(1);

    const more = [
      ...migrations,
      { version: 3, name: "again", sql: `insert into ${table} values (2, 'x');` },
    ];
    expect((await migrate(db.sql, { namespace: ns, migrations: more })).applied).toEqual([
      { version: 3, name: "again" },
    ]);
    expect(await count(table)).toBe(2);
    expect((await recorded(ns)).map((row) => row.version)).toEqual([1, 2, 3]);
  });

  it("keeps namespaces apart: the same versions in another namespace are applied too", async () => {
    const a = fresh();
    const b = fresh();
    await migrate(db.sql, { namespace: a.ns, migrations: a.migrations });
    expect(
      (await migrate(db.sql, { namespace: b.ns, migrations: b.migrations })).applied,
    ).toHaveLength(2);
  });

  it("rejects an applied migration whose text changed, and applies nothing", async () => {
    const { ns, table, migrations } = fresh();
    await migrate(db.sql, { namespace: ns, migrations });
    const edited = [
      migrations[0]!,
      { ...migrations[1]!, sql: `insert into ${table} values (1, 'edited');` },
      { version: 3, name: "later", sql: `insert into ${table} values (3, 'later');` },
    ];
    await expect(migrate(db.sql, { namespace: ns, migrations: edited })).rejects.toThrow(
      new RegExp(`Migration ${ns}/0002_seed changed after it was applied`),
    );
    expect(await count(table)).toBe(1);
    expect((await recorded(ns)).map((row) => row.version)).toEqual([1, 2]);
  });

  it("treats CRLF and LF line endings as the same migration", async () => {
    const { ns, migrations } = fresh();
    const crlf = migrations.map((m) => ({ ...m, sql: `-- header\r\n${m.sql}\r\n` }));
    const lf = migrations.map((m) => ({ ...m, sql: `-- header\n${m.sql}\n` }));
    await migrate(db.sql, { namespace: ns, migrations: crlf });
    expect((await migrate(db.sql, { namespace: ns, migrations: lf })).applied).toEqual([]);
  });

  it("rolls a failing run back fully: no table, no row, no record", async () => {
    const { ns, table, migrations } = fresh();
    const failing = [
      ...migrations,
      { version: 3, name: "broken", sql: `insert into ${table} values (1, 'dup');` },
    ];
    await expect(migrate(db.sql, { namespace: ns, migrations: failing })).rejects.toThrow(
      new RegExp(`Migration ${ns}/0003_broken failed.*duplicate key`),
    );
    const [row] = await db.sql`select to_regclass(${table}) is null as gone`;
    expect(row?.["gone"]).toBe(true);
    expect(await recorded(ns)).toEqual([]);

    // Fixed, the same run then applies cleanly from the start.
    expect((await migrate(db.sql, { namespace: ns, migrations })).applied).toHaveLength(2);
  });

  it("refuses two migrations with one version before touching the database", async () => {
    const { ns, migrations } = fresh();
    const twice = [...migrations, { ...migrations[0]!, name: "clash" }];
    await expect(migrate(db.sql, { namespace: ns, migrations: twice })).rejects.toThrow(
      /Two migrations share version 1/,
    );
    expect(await recorded(ns)).toEqual([]);
  });

  it("applies once when two migrate() calls on one handle race", async () => {
    const { ns, table } = fresh();
    const migrations: Migration[] = [
      { version: 1, name: "create", sql: `create table ${table} (id serial primary key);` },
      // Not idempotent: a second application would add a second row.
      {
        version: 2,
        name: "insert",
        sql: `select pg_sleep(0.2); insert into ${table} default values;`,
      },
    ];
    const results = await Promise.all([
      migrate(db.sql, { namespace: ns, migrations }),
      migrate(db.sql, { namespace: ns, migrations }),
    ]);
    expect(results.map((r) => r.applied.length).sort()).toEqual([0, 2]);
    expect(await count(table)).toBe(1);
    expect((await recorded(ns)).map((row) => row.version)).toEqual([1, 2]);
  });
});

const backends = await testBackends();
describe.runIf(backends.includes("postgres"))(
  "migrate with two processes racing (postgres)",
  () => {
    const child = fileURLToPath(new URL("../../test/db/migrate-child.ts", import.meta.url));

    /** Starts a racer and resolves once it is connected and waiting for the start signal. */
    function racer(url: string) {
      const proc = spawn(process.execPath, ["--import", "tsx", child, url], {
        stdio: ["pipe", "pipe", "pipe"],
      });
      let stderr = "";
      proc.stderr.on("data", (chunk) => {
        stderr += chunk;
      });
      const lines = createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
      const exited = new Promise<number | null>((resolve) => proc.on("close", resolve));
      const ready = lines.next().then((line) => {
        if (line.value !== "ready") throw new Error(`racer did not get ready: ${stderr}`);
      });
      const result = async () => {
        const line = await lines.next();
        const code = await exited;
        if (code !== 0) throw new Error(`racer exited ${code}: ${stderr}`);
        return JSON.parse(String(line.value)) as { applied: { version: number }[] };
      };
      return { proc: proc as ChildProcess, ready, result };
    }

    it("records each migration exactly once and runs its effect once", async () => {
      const db = await createTestDatabase({ backend: "postgres" });
      try {
        const racers = [racer(db.url), racer(db.url)];
        await Promise.all(racers.map((r) => r.ready));
        for (const r of racers) r.proc.stdin?.write("go\n");
        const results = await Promise.all(racers.map((r) => r.result()));

        // Both succeed: one applied everything, the other waited on the lock and found nothing to do.
        expect(results.map((r) => r.applied.map((m) => m.version)).sort()).toEqual([[], [1, 2, 3]]);
        const rows = await db.sql`
        select version, count(*)::int as n from platform_migrations
        where namespace = 'race' group by version order by version`;
        expect(rows).toEqual([
          { version: 1, n: 1 },
          { version: 2, n: 1 },
          { version: 3, n: 1 },
        ]);
        const effects = await db.sql`select note from race_effects order by id`;
        expect(effects.map((row) => row["note"])).toEqual(["0002", "0003"]);
        const fixtures = await loadMigrations(
          new URL("../../test/db/fixtures/race/", import.meta.url),
        );
        expect(fixtures).toHaveLength(3);
      } finally {
        await db.close();
      }
    }, 60_000);
  },
);
