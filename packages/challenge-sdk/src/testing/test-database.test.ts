import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase, testBackends } from "@platform/core/testing";
import { describe, expect, it } from "vitest";
import { testDatabase } from "./test-database.js";

const MIGRATIONS = [
  {
    version: 1,
    name: "notes",
    sql: "create table notes (id serial primary key, text text not null)",
  },
  { version: 2, name: "tags", sql: "alter table notes add column tag text" },
];

/** Whether a database of this name exists on the test server (asked from another one). */
async function exists(name: string): Promise<boolean> {
  const other = await createTestDatabase({ backend: "postgres" });
  try {
    return (await other.sql`select 1 from pg_database where datname = ${name}`).length > 0;
  } finally {
    await other.close();
  }
}

describe.each(await testBackends())("testDatabase on %s", (backend) => {
  it("migrates the SDK's tables and the given migrations, and drops the database on close", async () => {
    const db = await testDatabase(MIGRATIONS, { backend });
    expect(db.backend).toBe(backend);
    await db.sql`insert into notes (text, tag) values ('a', 'b')`;
    const [counted] = await db.sql<{ n: number }[]>`select count(*)::int as n from sdk_rate_limits`;
    expect(counted!.n).toBe(0);
    const recorded = await db.sql<{ namespace: string; version: number }[]>`
      select namespace, version from platform_migrations where namespace = 'challenge' order by version`;
    expect(recorded.map((row) => row.version)).toEqual([1, 2]);
    const name = new URL(db.url).pathname.slice(1);
    await db.close();
    if (backend === "postgres") expect(await exists(name)).toBe(false);
  });

  it("reads a folder of NNNN_name.sql files, under a namespace of one's own", async () => {
    const folder = await mkdtemp(join(tmpdir(), "test-database-"));
    await writeFile(join(folder, "0001_notes.sql"), MIGRATIONS[0]!.sql);
    const db = await testDatabase(folder, { backend, namespace: "my-challenge" });
    try {
      const rows = await db.sql<{ name: string }[]>`
        select name from platform_migrations where namespace = 'my-challenge'`;
      expect(rows.map((row) => row.name)).toEqual(["notes"]);
    } finally {
      await db.close();
      await rm(folder, { recursive: true, force: true });
    }
  });

  it("rethrows a failing migration, closing the database it opened", async () => {
    await expect(
      testDatabase([{ version: 1, name: "broken", sql: "create tabel nope ()" }], { backend }),
    ).rejects.toThrow(/broken|syntax/);
  });
});
