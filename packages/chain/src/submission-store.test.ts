import { type Database, migrate } from "@platform/core";
import { createTestDatabase, testBackends } from "@platform/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type NewSubmission,
  OpenAttemptError,
  SubmissionStore,
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
  // That the master applies these very files is the master's test (src/migrations.test.ts).
  it("is chain_submissions and commit_reveal, as versions 5 and 6 (the master's numbers), and nothing else", async () => {
    const migrations = await validatorMigrations();
    expect(migrations.map((m) => [m.version, m.name])).toEqual([
      [5, "chain_submissions"],
      [6, "commit_reveal"],
    ]);
  });
});

describe.each(await testBackends())("SubmissionStore on %s", (backend) => {
  let db: Database;
  let store: SubmissionStore;

  beforeAll(async () => {
    db = await createTestDatabase({ backend });
    // A database that already has the tables (the master's applies the same files as its own),
    // which a validator pointed at it migrates under its own namespace.
    await migrate(db.sql, { namespace: "master", migrations: await validatorMigrations() });
    const again = await migrate(db.sql, {
      namespace: "validator",
      migrations: await validatorMigrations(),
    });
    expect(again.applied).toEqual([
      { version: 5, name: "chain_submissions" },
      { version: 6, name: "commit_reveal" },
    ]);
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

  it("records a commit, moves it committed -> revealed or unrevealed only, and links the recommit", async () => {
    const commit = (n: number) => ({
      hash: hash(5000 + n),
      revealRound: 1_000_000 + n,
      commitEpoch: 40 + n,
      revealEpoch: 41 + n,
      beaconPublicKey: `0x${"ab".repeat(96)}`,
    });
    const base = { hotkey: "5Erin", netuid: 3 };
    const first = await store.insertPending(attempt({ ...base, commit: commit(1) }));
    expect(first).toMatchObject({
      kind: "commit",
      status: "pending",
      commit: {
        ...commit(1),
        revealBlock: null,
        cause: null,
        detail: null,
        recommitId: null,
      },
    });
    expect((await store.commitsForEpoch(3, "5Erin", 41)).map((r) => r.id)).toEqual([first.id]);
    // The including block stores it under another epoch than expected: the record follows.
    const committed = await store.settle(first.id, {
      status: "committed",
      block: { number: 130, hash: hash(130) },
      epochs: { commitEpoch: 42, revealEpoch: 43 },
    });
    expect(committed).toMatchObject({
      status: "committed",
      finalizedBlock: { number: 130, hash: hash(130) },
      commit: { commitEpoch: 42, revealEpoch: 43 },
    });
    expect(await store.commitsForEpoch(3, "5Erin", 41)).toEqual([]);
    expect((await store.awaitingReveal(3, "5Erin")).map((r) => r.id)).toEqual([first.id]);
    const lost = await store.settleReveal(first.id, {
      status: "unrevealed",
      block: { number: 150, hash: hash(150) },
      cause: "pulse_missing",
      detail: "round never stored",
    });
    expect(lost).toMatchObject({
      status: "unrevealed",
      commit: {
        revealBlock: { number: 150, hash: hash(150) },
        cause: "pulse_missing",
        detail: "round never stored",
        recommitId: null,
      },
    });
    expect(await store.awaitingReveal(3, "5Erin")).toEqual([]);
    // Final: a reveal outcome does not change again, nor does settle move it.
    expect(await store.settleReveal(first.id, { status: "revealed", block: null })).toEqual(lost);
    expect(await store.settle(first.id, { status: "dropped" })).toEqual(lost);

    // A set_weights "committed" is a finalized one; a commit never becomes finalized.
    const plain = await store.insertPending(attempt({ hotkey: "5Fay", netuid: 3 }));
    expect((await store.settle(plain.id, { status: "committed" })).status).toBe("finalized");
    expect(plain.commit).toBeNull();

    // The next commit the chain accepts carries the weights again.
    const second = await store.insertPending(attempt({ ...base, commit: commit(2) }));
    expect(await store.linkRecommit(second.id)).toEqual([]);
    await store.settle(second.id, {
      status: "finalized",
      block: { number: 160, hash: hash(160) },
    });
    expect((await store.get(second.id))?.status).toBe("committed");
    expect(await store.linkRecommit(second.id)).toEqual([first.id]);
    expect((await store.get(first.id))?.commit?.recommitId).toBe(second.id);
    // An unrevealed commit after which a commit already exists is linked when it settles.
    const third = await store.insertPending(attempt({ ...base, commit: commit(3) }));
    await store.settle(third.id, { status: "committed", block: { number: 170, hash: hash(170) } });
    const revealed = await store.settleReveal(second.id, {
      status: "unrevealed",
      block: { number: 175, hash: hash(175) },
      cause: "dropped_at_reveal",
    });
    expect(revealed.commit?.recommitId).toBe(third.id);
    await store.settleReveal(third.id, {
      status: "revealed",
      block: { number: 180, hash: hash(180) },
    });
    expect((await store.lastRevealed(3, "5Erin"))?.id).toBe(third.id);
    // A revealed commit is the hotkey's last confirmed weights.
    expect((await store.lastConfirmed(3, "5Erin"))?.id).toBe(third.id);
  });

  it("keeps the last verified snapshot per subnet and hotkey", async () => {
    expect(await store.lastVerifiedSnapshot(4, "5Gus")).toBeUndefined();
    const snapshot = (id: number) => ({
      id,
      computed_at: new Date(0).toISOString(),
      uids: [1],
      weights: [1],
      weights_u16: [65535],
      hotkeys: { "5Hal": 1 },
      burned: false,
      sources: [],
    });
    await store.saveVerifiedSnapshot(4, "5Gus", snapshot(1));
    await store.saveVerifiedSnapshot(4, "5Gus", snapshot(2));
    await store.saveVerifiedSnapshot(5, "5Gus", snapshot(3));
    const kept = await store.lastVerifiedSnapshot(4, "5Gus");
    expect(kept?.snapshot).toEqual(snapshot(2));
    expect(kept?.verifiedAt).toBeInstanceOf(Date);
    expect((await store.lastVerifiedSnapshot(5, "5Gus"))?.snapshot.id).toBe(3);
  });

  it("keeps a u64 version key exactly", async () => {
    const max = 2n ** 64n - 1n;
    const row = await store.insertPending(attempt({ hotkey: "5Dave", versionKey: max, uid: null }));
    expect((await store.get(row.id))?.versionKey).toBe(max);
    expect((await store.get(row.id))?.uid).toBeNull();
    await store.settle(row.id, { status: "dropped" });
  });
});
