import type { Sql } from "@platform/challenge-sdk";
import { testBackends, waitFor } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { insertSubmission, scoringDatabase } from "../test/scoring-database.js";
import { acquireGpuLease, gpuStatus, releaseGpuLease } from "./gpu-leases.js";

describe.each(await testBackends())("GPU leases on %s", (backend) => {
  let db: Awaited<ReturnType<typeof scoringDatabase>>;
  let sql: Sql;
  beforeAll(async () => {
    db = await scoringDatabase(backend);
    sql = db.sql;
  });
  afterAll(() => db?.close());
  beforeEach(async () => {
    await sql`delete from gpu_leases`;
  });

  const options = { count: 1, tier: "a100", waitSeconds: 5, staleAfterSeconds: 3600, pollMs: 20 };
  const submission = () => insertSubmission(sql, { status: "running" });

  it("grants free GPUs at once, each index to one run", async () => {
    const [a, b, c] = [await submission(), await submission(), await submission()];
    const two = { ...options, count: 2 };
    expect((await acquireGpuLease(sql, a, two))?.gpuIndex).toBe(0);
    expect((await acquireGpuLease(sql, b, two))?.gpuIndex).toBe(1);
    // Both busy: the third gives up after its wait, and its queued lease is released.
    expect(await acquireGpuLease(sql, c, { ...two, waitSeconds: 0 })).toBeNull();
    expect(await gpuStatus(sql, 2)).toEqual({
      total_gpus: 2,
      active_leases: 2,
      by_status: { queued: 0, active: 2, released: 1 },
      by_tier: { a100: 2 },
    });
    await releaseGpuLease(sql, a);
    expect((await acquireGpuLease(sql, c, two))?.gpuIndex).toBe(0);
  });

  it("serves waiting runs first come, first served", async () => {
    const [holder, first, second] = [await submission(), await submission(), await submission()];
    expect(await acquireGpuLease(sql, holder, options)).not.toBeNull();
    const order: string[] = [];
    const firstWait = acquireGpuLease(sql, first, options).then((lease) => {
      order.push("first");
      return lease;
    });
    // The second queues strictly after the first.
    await waitFor(async () => (await gpuStatus(sql, 1)).by_status.queued === 1);
    const secondWait = acquireGpuLease(sql, second, options).then((lease) => {
      order.push("second");
      return lease;
    });
    await waitFor(async () => (await gpuStatus(sql, 1)).by_status.queued === 2);
    await releaseGpuLease(sql, holder);
    expect((await firstWait)?.gpuIndex).toBe(0);
    expect(order).toEqual(["first"]);
    await releaseGpuLease(sql, first);
    expect((await secondWait)?.gpuIndex).toBe(0);
    expect(order).toEqual(["first", "second"]);
  });

  it("takes back the GPU of a run that cannot still be going, and a retried run's old lease", async () => {
    const [lost, next] = [await submission(), await submission()];
    expect(await acquireGpuLease(sql, lost, options)).not.toBeNull();
    // Its worker was killed; past the run's timeout the lease is stale.
    await sql`update gpu_leases set activated_at = now() - interval '2 hours'
              where submission_id = ${lost}::bigint`;
    expect((await acquireGpuLease(sql, next, options))?.gpuIndex).toBe(0);
    // The same submission retried: its previous lease is released, never doubled.
    const again = await acquireGpuLease(sql, next, { ...options, waitSeconds: 0 });
    expect(again?.gpuIndex).toBe(0);
    const live = await sql`select id from gpu_leases where status <> 'released'`;
    expect(live).toHaveLength(1);
  });
});
