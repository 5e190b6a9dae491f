import { randomBytes } from "node:crypto";
import { type Database, type HttpError, migrate } from "@platform/core";
import { createTestDatabase, testBackends } from "@platform/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { masterMigrations } from "../migrations.js";
import { ChallengeStore } from "../registry/challenge-store.js";
import { type Admission, RunLedger } from "./run-ledger.js";

describe.each(await testBackends())("RunLedger on %s", (backend) => {
  let db: Database;
  let ledger: RunLedger;
  let store: ChallengeStore;
  let seq = 0;

  beforeAll(async () => {
    db = await createTestDatabase({ backend });
    await migrate(db.sql, { namespace: "master", migrations: await masterMigrations() });
    store = new ChallengeStore(db.sql, randomBytes(32));
    ledger = new RunLedger(db.sql);
    for (const slug of ["alpha", "bravo", "gamma", "off"]) {
      await store.create({
        slug,
        name: slug,
        image: "ghcr.io/x/y:1",
        version: "1",
        emission_percent: 0,
        api_version: "1.0",
      });
    }
    await store.setStatus("off", "disabled", "test");
  });
  afterAll(() => db?.close());

  const admission = (slug: string, extra: Partial<Admission> = {}): Admission => ({
    containerName: `platform-${slug}-job-${++seq}`,
    slug,
    jobId: `job-${seq}`,
    backend: "engine",
    engineId: "engine-1",
    runner: "runner-1",
    image: "ghcr.io/x/y:1",
    gpus: 0,
    deadline: new Date(Date.now() + 60_000),
    ...extra,
  });
  const quota = { maxConcurrent: 4, maxGpus: 2, gpuDevices: [] as string[] };
  const settle = <T>(promises: Promise<T>[]) => Promise.allSettled(promises);

  it("has one stable id per database", async () => {
    const id = await ledger.instanceId();
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    expect(await new RunLedger(db.sql).instanceId()).toBe(id);
    const other = await createTestDatabase({ backend });
    try {
      await migrate(other.sql, { namespace: "master", migrations: await masterMigrations() });
      expect(await new RunLedger(other.sql).instanceId()).not.toBe(id);
    } finally {
      await other.close();
    }
  });

  it("never admits more than the quota, however many ask at once", async () => {
    const results = await settle(
      Array.from({ length: 20 }, () => ledger.admit(admission("alpha"), quota)),
    );
    const admitted = results.filter((result) => result.status === "fulfilled");
    const refused = results
      .filter((result): result is PromiseRejectedResult => result.status === "rejected")
      .map((result) => result.reason as HttpError);
    expect(admitted).toHaveLength(4);
    expect(refused).toHaveLength(16);
    for (const error of refused) {
      expect(error.status).toBe(429);
      expect(error.code).toBe("quota_exceeded");
      expect(error.extra).toEqual({ resource: "containers", limit: 4, in_use: 4 });
      expect(Number(error.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    }
    expect(await ledger.live("alpha")).toHaveLength(4);
    // Another challenge has its own quota.
    await expect(ledger.admit(admission("bravo"), quota)).resolves.toEqual({ gpuDevices: [] });
  });

  it("frees a slot when a row ends, and only the first end counts", async () => {
    const [first] = await ledger.live("alpha");
    expect(await ledger.finish(first!.container_name, "exited", 0)).toBe(true);
    expect(await ledger.finish(first!.container_name, "reaped")).toBe(false);
    expect(await ledger.get(first!.container_name)).toMatchObject({
      status: "exited",
      returncode: 0,
    });
    await expect(ledger.admit(admission("alpha"), quota)).resolves.toBeDefined();
    await expect(ledger.admit(admission("alpha"), quota)).rejects.toMatchObject({ status: 429 });
    const names = (await ledger.live("alpha")).map((row) => row.container_name);
    expect(await ledger.finishMany(names, "cleaned")).toEqual(expect.arrayContaining(names));
    expect(await ledger.live("alpha")).toHaveLength(0);
  });

  it("refuses a disabled challenge (403) and an unknown one (401), writing nothing", async () => {
    await expect(ledger.admit(admission("off"), quota)).rejects.toMatchObject({
      status: 403,
      code: "challenge_disabled",
    });
    await expect(ledger.admit(admission("ghost"), quota)).rejects.toMatchObject({
      status: 401,
      code: "broker_unauthorized",
    });
    const rows = await db.sql`select 1 from broker_runs where slug in ('off', 'ghost')`;
    expect(rows).toHaveLength(0);
  });

  it("counts GPUs against the challenge's GPU quota, concurrently", async () => {
    const results = await settle(
      Array.from({ length: 5 }, () =>
        ledger.admit(admission("gamma", { gpus: 1 }), { ...quota, maxConcurrent: 10 }),
      ),
    );
    expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(2);
    const refused = results.find(
      (result): result is PromiseRejectedResult => result.status === "rejected",
    )!.reason as HttpError;
    expect(refused.extra).toEqual({ resource: "gpus", limit: 2, in_use: 2 });
    for (const row of await ledger.live("gamma"))
      await ledger.finish(row.container_name, "exited", 0);
  });

  it("leases distinct GPU devices across challenges, and reuses them once released", async () => {
    const pool = { maxConcurrent: 10, maxGpus: 2, gpuDevices: ["0", "1", "2"] };
    // gamma first (were the two bravo runs first, gamma would be the one refused: an order the
    // test must not depend on), then two runs racing for the one device left.
    const gamma = await ledger.admit(admission("gamma", { gpus: 2 }), pool);
    const results = await settle([
      ledger.admit(admission("bravo", { gpus: 1 }), pool),
      ledger.admit(admission("bravo", { gpus: 1 }), pool),
    ]);
    const leased = [
      ...gamma.gpuDevices,
      ...results
        .filter((r) => r.status === "fulfilled")
        .flatMap((r) => (r as PromiseFulfilledResult<{ gpuDevices: string[] }>).value.gpuDevices),
    ];
    expect(leased.sort()).toEqual(["0", "1", "2"]);
    const refused = results.find((r): r is PromiseRejectedResult => r.status === "rejected")!
      .reason as HttpError;
    expect(refused.extra).toMatchObject({ resource: "gpu devices", limit: 3, in_use: 3 });

    const leases = await ledger.gpuLeases("gamma");
    const live = leases.find((lease) => lease.ended_at === null)!;
    expect(live).toMatchObject({ count: 2, status: "running" });
    expect(live.devices).toHaveLength(2);
    await ledger.finish(live.container_name, "exited", 0);
    const reused = await ledger.admit(admission("gamma", { gpus: 2 }), pool);
    expect(reused.gpuDevices.sort()).toEqual([...live.devices].sort());
    expect((await ledger.gpuLeases("gamma"))[0]).toMatchObject({ count: 2, ended_at: null });
    expect(
      (await ledger.gpuLeases("gamma")).some(
        (lease) => lease.container_name === live.container_name && lease.status === "exited",
      ),
    ).toBe(true);
  });

  it("prunes only ended rows older than the history", async () => {
    const old = admission("bravo");
    await ledger.admit(old, { ...quota, maxConcurrent: 100 });
    await ledger.finish(old.containerName, "exited", 0);
    await db.sql`update broker_runs set ended_at = now() - interval '40 days' where container_name = ${old.containerName}`;
    const live = (await ledger.live()).length;
    expect(await ledger.prune(30)).toBe(1);
    expect(await ledger.get(old.containerName)).toBeNull();
    expect(await ledger.live()).toHaveLength(live);
  });
});
