import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkMigrations, loadMigrations } from "./load-migrations.js";

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

async function folder(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "platform-migrations-"));
  dirs.push(dir);
  await Promise.all(Object.entries(files).map(([name, text]) => writeFile(join(dir, name), text)));
  return dir;
}

describe("loadMigrations", () => {
  it("reads NNNN_name.sql files in version order from a file URL, ignoring other files", async () => {
    const migrations = await loadMigrations(
      new URL("../../test/db/fixtures/race/", import.meta.url),
    );
    expect(migrations.map(({ version, name }) => ({ version, name }))).toEqual([
      { version: 1, name: "create_race_effects" },
      { version: 2, name: "insert_once" },
      { version: 3, name: "add_column" },
    ]);
    expect(migrations[1]?.sql).toContain("insert into race_effects");
  });

  it("orders by number from a path", async () => {
    const dir = await folder({ "0010_ten.sql": "select 10;", "0002_two.sql": "select 2;" });
    expect((await loadMigrations(dir)).map((m) => m.version)).toEqual([2, 10]);
  });

  it("rejects a .sql file that is not named NNNN_name.sql instead of skipping it", async () => {
    const dir = await folder({ "0001_ok.sql": "", "002_typo.sql": "" });
    await expect(loadMigrations(dir)).rejects.toThrow(/002_typo\.sql must be named NNNN_name\.sql/);
  });

  it("rejects two files with one version", async () => {
    const dir = await folder({ "0001_a.sql": "", "0001_b.sql": "" });
    await expect(loadMigrations(dir)).rejects.toThrow(
      /Two migrations share version 1: "a" and "b"/,
    );
  });

  it("names a missing folder", async () => {
    await expect(loadMigrations("/nonexistent/migrations")).rejects.toThrow(
      /Cannot read migrations folder \/nonexistent\/migrations/,
    );
  });
});

describe("checkMigrations", () => {
  it("rejects a version below 1", () => {
    expect(() => checkMigrations([{ version: 0, name: "zero", sql: "" }])).toThrow(
      /invalid version 0/,
    );
  });
});
