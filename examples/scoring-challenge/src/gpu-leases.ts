/**
 * GPU leases: at most GPU_COUNT scored runs hold a GPU at once, granted first come, first
 * served. A lease is queued, then active (a GPU index assigned), then released. The database
 * refuses a double grant (one active lease per GPU index, one live lease per submission), so
 * workers on several machines share the GPUs through the table alone. CPU runs hold no lease.
 *
 * The index is bookkeeping: it bounds how many runs use GPUs at once; the engine (or the
 * master's broker) picks the device the container gets.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Sql } from "@platform/challenge-sdk";
import type { GpuStatus } from "./api-schemas.js";

/** How a run waits for a GPU. */
export interface GpuLeaseOptions {
  /** GPUs in the pool (at least 1 to lease). */
  count: number;
  tier: string;
  /** Give up (and release the queued lease) after this long. */
  waitSeconds: number;
  /**
   * An active lease older than this belongs to a run that cannot still be going (the run's
   * watchdog has killed it): it is released, so a worker killed mid-run never keeps a GPU.
   */
  staleAfterSeconds: number;
  /** Poll interval while queued (default 1000 ms). */
  pollMs?: number;
  signal?: AbortSignal;
}

/** A granted lease. */
export interface GpuLease {
  id: string;
  gpuIndex: number;
}

// A waiting run touches its queued lease every poll; one untouched this long was abandoned.
const QUEUED_STALE_SECONDS = 120;
const UNIQUE_VIOLATION = "23505";

/**
 * Queue a lease for `submissionId` and wait for a GPU, FIFO. Answers the lease, or null when
 * none was free within `waitSeconds` (the queued lease is then released).
 */
export async function acquireGpuLease(
  sql: Sql,
  submissionId: string,
  options: GpuLeaseOptions,
): Promise<GpuLease | null> {
  if (options.count < 1) throw new RangeError("acquireGpuLease: the pool has no GPU");
  // An earlier attempt of this submission (its worker died) may still hold a lease.
  await releaseGpuLease(sql, submissionId);
  await sql`
    update gpu_leases set status = 'released', released_at = now()
    where (status = 'queued' and updated_at < now() - make_interval(secs => ${QUEUED_STALE_SECONDS}))
       or (status = 'active' and activated_at < now() - make_interval(secs => ${options.staleAfterSeconds}))`;
  const [queued] = await sql<{ id: string }[]>`
    insert into gpu_leases (submission_id, tier) values (${submissionId}::bigint, ${options.tier})
    returning id::text`;
  const id = queued!.id;
  const deadline = Date.now() + options.waitSeconds * 1000;
  for (;;) {
    const granted = await tryActivate(sql, id, options.count);
    if (granted !== null) return { id, gpuIndex: granted };
    if (Date.now() >= deadline || options.signal?.aborted) {
      await sql`update gpu_leases set status = 'released', released_at = now()
                where id = ${id}::bigint and status <> 'released'`;
      return null;
    }
    await sql`update gpu_leases set tier = tier where id = ${id}::bigint and status = 'queued'`;
    await sleep(options.pollMs ?? 1000);
  }
}

/** Activate lease `id` if it heads the queue and a GPU index is free; the index, or null. */
async function tryActivate(sql: Sql, id: string, count: number): Promise<number | null> {
  try {
    const [row] = await sql<{ gpu_index: number }[]>`
      update gpu_leases lease
      set status = 'active', activated_at = now(), gpu_index = free.gpu
      from (
        select min(slot) as gpu from generate_series(0, ${count - 1}::int) slot
        where slot not in (select gpu_index from gpu_leases
                           where status = 'active' and gpu_index is not null)
      ) free
      where lease.id = ${id}::bigint and lease.status = 'queued' and free.gpu is not null
        and not exists (select 1 from gpu_leases ahead
                        where ahead.status = 'queued' and ahead.id < lease.id)
      returning lease.gpu_index`;
    return row ? row.gpu_index : null;
  } catch (error) {
    // Two workers picked the same free index at once: the unique index kept one; ask again.
    if ((error as { code?: string }).code === UNIQUE_VIOLATION) return null;
    throw error;
  }
}

/** Release whatever lease `submissionId` holds or waits for. */
export async function releaseGpuLease(sql: Sql, submissionId: string): Promise<void> {
  await sql`
    update gpu_leases set status = 'released', released_at = now()
    where submission_id = ${submissionId}::bigint and status <> 'released'`;
}

/** GET /v1/gpu/status: the pool, the active leases, every lease by status, live ones by tier. */
export async function gpuStatus(sql: Sql, totalGpus: number): Promise<GpuStatus> {
  const rows = await sql<{ status: "queued" | "active" | "released"; tier: string; n: number }[]>`
    select status, tier, count(*)::int as n from gpu_leases group by status, tier`;
  const byStatus = { queued: 0, active: 0, released: 0 };
  const byTier: Record<string, number> = {};
  for (const row of rows) {
    byStatus[row.status] += row.n;
    if (row.status !== "released") byTier[row.tier] = (byTier[row.tier] ?? 0) + row.n;
  }
  return {
    total_gpus: totalGpus,
    active_leases: byStatus.active,
    by_status: byStatus,
    by_tier: byTier,
  };
}
