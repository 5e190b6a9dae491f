// A new embedded cluster starts from the initdb snapshot; an existing one never does. Each test
// keeps its snapshot in a folder of its own: the shared one in node_modules/.cache is what the
// rest of the suite starts from, and a damaged copy must not reach them.
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCluster } from "./_embedded.js";
import { defaultSnapshotPath } from "./_initdb-snapshot.js";
import { DATA_DIR_LOCK_FILE } from "./data-dir-lock.js";

let root: string;
let markedSnapshot: Uint8Array;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "initdb-snapshot-"));
  // A snapshot with a table no initdb makes: a cluster that has it was loaded from the snapshot.
  const marked = await PGlite.create();
  await marked.exec("create table made_by_the_snapshot (id int)");
  markedSnapshot = new Uint8Array(await (await marked.dumpDataDir("none")).arrayBuffer());
  await marked.close();
});
afterAll(() => rm(root, { recursive: true, force: true }));

async function placeSnapshot(bytes: Uint8Array): Promise<string> {
  const dir = await mkdtemp(join(root, "cache-"));
  const path = join(dir, "snapshot.tar");
  await writeFile(path, bytes);
  return path;
}

async function hasMarker(db: PGlite): Promise<boolean> {
  const { rows } = await db.query<{ found: boolean }>(
    "select to_regclass('made_by_the_snapshot') is not null as found",
  );
  return rows[0]!.found;
}

describe("createCluster", () => {
  it("starts a new cluster in memory and in an empty data directory from the snapshot", async () => {
    const snapshot = await placeSnapshot(markedSnapshot);
    const memory = await createCluster(undefined, snapshot);
    expect(await hasMarker(memory)).toBe(true);
    await memory.close();

    const dir = join(root, "empty");
    await mkdir(dir);
    await writeFile(join(dir, DATA_DIR_LOCK_FILE), "1@host");
    const onDisk = await createCluster(dir, snapshot);
    expect(await hasMarker(onDisk)).toBe(true);
    await onDisk.exec("insert into made_by_the_snapshot values (7)");
    await onDisk.close();
    // Written to the directory, and resumed from it (with the lock file left alone).
    expect(await readdir(dir)).toEqual(expect.arrayContaining(["PG_VERSION", DATA_DIR_LOCK_FILE]));
    const reopened = await createCluster(dir, snapshot);
    expect((await reopened.query("select id from made_by_the_snapshot")).rows).toEqual([{ id: 7 }]);
    await reopened.close();
  });

  it("resumes an existing cluster rather than loading the snapshot over it", async () => {
    const dir = join(root, "existing");
    const first = await PGlite.create(dir);
    await first.exec("create table kept (v text); insert into kept values ('mine')");
    await first.close();
    const resumed = await createCluster(dir, await placeSnapshot(markedSnapshot));
    expect(await hasMarker(resumed)).toBe(false);
    expect((await resumed.query("select v from kept")).rows).toEqual([{ v: "mine" }]);
    await resumed.close();
  });

  it("leaves a directory holding anything else to initdb, as without a snapshot", async () => {
    const dir = join(root, "not-empty");
    await mkdir(dir);
    await writeFile(join(dir, "notes.txt"), "the user's");
    const db = await createCluster(dir, await placeSnapshot(markedSnapshot));
    expect(await hasMarker(db)).toBe(false);
    await db.close();
    expect(await readFile(join(dir, "notes.txt"), "utf8")).toBe("the user's");
  });

  it("makes the snapshot when there is none, and the next cluster starts from it", async () => {
    const path = join(await mkdtemp(join(root, "cache-")), "nested", "snapshot.tar");
    const first = await createCluster(undefined, path);
    await first.close();
    expect(existsSync(path)).toBe(true);
    // Only the snapshot is left: no partial file from the atomic write.
    expect(await readdir(join(path, ".."))).toEqual(["snapshot.tar"]);
    const second = await createCluster(undefined, path);
    expect((await second.query("select 1 as one")).rows).toEqual([{ one: 1 }]);
    await second.close();
  });

  it("starts from a snapshot it could not keep, and leaves no partial file behind", async () => {
    // A directory where the snapshot file should go: made, written aside, never renamed in.
    const folder = await mkdtemp(join(root, "cache-"));
    const path = join(folder, "snapshot.tar");
    await mkdir(join(path, "in-the-way"), { recursive: true });
    const db = await createCluster(undefined, path);
    expect((await db.query("select 1 as one")).rows).toEqual([{ one: 1 }]);
    await db.close();
    expect(await readdir(folder)).toEqual(["snapshot.tar"]);
    expect(await readdir(path)).toEqual(["in-the-way"]);
  });

  it("survives a damaged snapshot: discards it, clears what the load wrote, and runs initdb", async () => {
    const snapshot = await placeSnapshot(markedSnapshot.subarray(0, 1_000_000));
    const dir = join(root, "damaged");
    await mkdir(dir);
    await writeFile(join(dir, DATA_DIR_LOCK_FILE), "1@host");
    const db = await createCluster(dir, snapshot);
    expect(await hasMarker(db)).toBe(false);
    expect((await db.query("select 1 as one")).rows).toEqual([{ one: 1 }]);
    await db.close();
    expect(existsSync(snapshot)).toBe(false);
    expect(await readFile(join(dir, DATA_DIR_LOCK_FILE), "utf8")).toBe("1@host");
  });

  it("keeps the shared snapshot beside the installed PGlite, named by its version", async () => {
    const installed = fileURLToPath(new URL("../../../../node_modules/", import.meta.url));
    const manifest = join(installed, "@electric-sql", "pglite", "package.json");
    const { version } = JSON.parse(await readFile(manifest, "utf8")) as { version: string };
    expect(await defaultSnapshotPath()).toBe(
      join(installed, ".cache", "platform-pglite", `${version}.tar`),
    );
  });
});
