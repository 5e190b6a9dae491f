import { type Database, migrate } from "@platform/core";
import { createTestDatabase, testBackends } from "@platform/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { masterMigrations } from "../migrations.js";
import {
  type NewSubmission,
  OpenAttemptError,
  SubmissionStore,
  VALIDATOR_MIGRATION_NAMES,
  validatorMigrations,
} from "./submission-store.js";

const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;

const attempt = (extra: Partial<NewSubmission> = {}): NewSubmission => ({
  snapshotId: 7,
  netuid: 1,
  hotkey: "5Alice",
  uid: 0,
  builtBlock: { number: 100, hash: hash(100) },
  extrinsicHash: hash(9000 + Math.floor(Math.random() * 1e6)),
  nonce: 3,
  eraBirth: 100,
  eraDeath: 164,
  uids: [0, 1, 2],
  weights: [65535, 0, 12],
  versionKey: 5n,
  ...extra,
});

describe("validatorMigrations", () => {
  it("is the master's chain_submissions migration, and nothing else", async () => {
    const migrations = await validatorMigrations();
    expect(migrations.map((m) => [m.version, m.name])).toEqual([[5, "chain_submissions"]]);
    expect(VALIDATOR_MIGRATION_NAMES).toEqual(["chain_submissions"]);
    const master = await masterMigrations();
    expect(master.find((m) => m.name === "chain_submissions")?.sql).toBe(migrations[0]?.sql);
  });
});

describe.each(await testBackends())("SubmissionStore on %s", (backend) => {
  let db: Database;
  let store: SubmissionStore;

  beforeAll(async () => {
    db = await createTestDatabase({ backend });
    // The master's database, which a validator pointed at it migrates under its own namespace.
    await migrate(db.sql, { namespace: "master", migrations: await masterMigrations() });
    const again = await migrate(db.sql, {
      namespace: "validator",
      migrations: await validatorMigrations(),
    });
    expect(again.applied).toEqual([{ version: 5, name: "chain_submissions" }]);
    store = new SubmissionStore(db.sql);
  });
  afterAll(() => db?.close());

  it("records an attempt, only moves it forward, and allows one open attempt per hotkey", async () => {
    const first = await store.insertPending(attempt());
    expect(first).toMatchObject({
      status: "pending",
      snapshotId: 7,
      uid: 0,
      builtBlock: { number: 100, hash: hash(100) },
      nonce: 3,
      eraBirth: 100,
      eraDeath: 164,
      inBlock: null,
      finalizedBlock: null,
      errorCode: null,
      uids: [0, 1, 2],
      weights: [65535, 0, 12],
      versionKey: 5n,
    });
    expect(first.createdAt).toBeInstanceOf(Date);

    const second = await store.insertPending(attempt()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(second).toBeInstanceOf(OpenAttemptError);
    expect((second as OpenAttemptError).open?.id).toBe(first.id);
    // Another hotkey, or another subnet, is independent.
    const other = await store.insertPending(attempt({ hotkey: "5Bob" }));
    const elsewhere = await store.insertPending(attempt({ netuid: 2 }));

    const inBlock = await store.markInBlock(first.id, { number: 102, hash: hash(102) });
    expect(inBlock).toMatchObject({
      status: "in_block",
      inBlock: { number: 102, hash: hash(102) },
    });
    const retracted = await store.markRetracted(first.id);
    expect(retracted).toMatchObject({ status: "pending", inBlock: null });
    await store.markInBlock(first.id, { number: 103, hash: hash(103) });
    const done = await store.settle(first.id, {
      status: "finalized",
      block: { number: 103, hash: hash(103) },
    });
    expect(done).toMatchObject({
      status: "finalized",
      inBlock: { number: 103, hash: hash(103) },
      finalizedBlock: { number: 103, hash: hash(103) },
    });
    expect(done.updatedAt.getTime()).toBeGreaterThanOrEqual(first.updatedAt.getTime());
    // A final row never changes again.
    expect(await store.settle(first.id, { status: "dropped" })).toEqual(done);
    expect(await store.markInBlock(first.id, { number: 104, hash: hash(104) })).toEqual(done);
    expect(await store.markRetracted(first.id)).toEqual(done);
    // Now a new attempt may open.
    const next = await store.insertPending(attempt());
    expect(await store.open(1, "5Alice")).toEqual([next]);

    const failed = await store.settle(other.id, {
      status: "failed",
      error: {
        code: "1010",
        name: "Transaction is outdated",
        message: "1010: Invalid Transaction",
      },
    });
    expect(failed).toMatchObject({
      status: "failed",
      errorCode: "1010",
      errorName: "Transaction is outdated",
      finalizedBlock: null,
    });
    const dropped = await store.settle(elsewhere.id, {
      status: "dropped",
      error: { code: "era", name: "EraExpired" },
    });
    expect(dropped).toMatchObject({
      status: "dropped",
      errorName: "EraExpired",
      errorMessage: null,
    });
    await store.settle(next.id, { status: "dropped" });
  });

  it("lists recent attempts newest first, filtered, and the last confirmed one", async () => {
    const a = await store.insertPending(attempt({ hotkey: "5Carol", netuid: 9 }));
    await store.settle(a.id, { status: "finalized", block: { number: 120, hash: hash(120) } });
    const b = await store.insertPending(attempt({ hotkey: "5Carol", netuid: 9 }));
    await store.settle(b.id, {
      status: "failed",
      error: { code: "module", name: "SettingWeightsTooFast" },
    });
    const recent = await store.recent({ netuid: 9, hotkey: "5Carol" });
    expect(recent.map((r) => r.id)).toEqual([b.id, a.id]);
    expect((await store.recent({ netuid: 9, limit: 1 })).map((r) => r.id)).toEqual([b.id]);
    expect((await store.lastConfirmed(9, "5Carol"))?.id).toBe(a.id);
    expect(await store.lastConfirmed(9, "5Nobody")).toBeUndefined();
    expect((await store.recent()).length).toBeGreaterThanOrEqual(2);
  });

  it("keeps a u64 version key exactly", async () => {
    const max = 2n ** 64n - 1n;
    const row = await store.insertPending(attempt({ hotkey: "5Dave", versionKey: max, uid: null }));
    expect((await store.get(row.id))?.versionKey).toBe(max);
    expect((await store.get(row.id))?.uid).toBeNull();
    await store.settle(row.id, { status: "dropped" });
  });
});
