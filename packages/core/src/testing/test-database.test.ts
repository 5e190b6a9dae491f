import postgres from "postgres";
import { describe, expect, it, vi } from "vitest";
import { testBackends } from "./test-backends.js";
import { createTestDatabase, testServerUrl } from "./test-database.js";

describe.runIf((await testBackends()).includes("postgres"))("createTestDatabase (postgres)", () => {
  const exists = async (name: string) => {
    const admin = postgres(testServerUrl(), { max: 1, onnotice: () => {} });
    try {
      return (await admin`select 1 from pg_database where datname = ${name}`).length === 1;
    } finally {
      await admin.end();
    }
  };

  it("creates a fresh, uniquely named database and drops it on close, even with connections open", async () => {
    const [a, b] = await Promise.all([
      createTestDatabase({ backend: "postgres" }),
      createTestDatabase({ backend: "postgres" }),
    ]);
    const nameA = (await a.sql<{ db: string }[]>`select current_database() as db`)[0]!.db;
    const nameB = (await b.sql<{ db: string }[]>`select current_database() as db`)[0]!.db;
    expect(nameA).toMatch(/^platform_test_[0-9a-f]{12}$/);
    expect(nameA).not.toBe(nameB);
    expect(a.backend).toBe("postgres");
    expect(await a.sql`select tablename from pg_tables where schemaname = 'public'`).toEqual([]);

    // A client the helper does not own still holds a connection: WITH (FORCE) must evict it.
    const stray = postgres(a.url, { max: 1 });
    await stray`select 1`;
    await a.close();
    await a.close();
    expect(await exists(nameA)).toBe(false);
    expect(await exists(nameB)).toBe(true);
    await b.close();
    expect(await exists(nameB)).toBe(false);
    await stray.end({ timeout: 0 });
  });
});

describe("createTestDatabase (pglite)", () => {
  it("gives each caller its own empty in-memory database, whatever DATABASE_URL says", async () => {
    vi.stubEnv("DATABASE_URL", "postgres://nobody@127.0.0.1:1/elsewhere");
    const a = await createTestDatabase({ backend: "pglite" });
    const b = await createTestDatabase({ backend: "pglite" });
    vi.unstubAllEnvs();
    try {
      expect(a.backend).toBe("pglite");
      await a.sql`create table only_in_a (n int)`;
      expect(await b.sql`select to_regclass('only_in_a') as t`).toEqual([{ t: null }]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
