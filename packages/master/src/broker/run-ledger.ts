import { HttpError, type Sql } from "@platform/core";
import type { ExecutorKind } from "./executor.js";

/** How a workload's row ended (or `running` while it holds its slot). */
export type RunStatus =
  | "running"
  | "exited"
  | "timed_out"
  | "oom_killed"
  | "failed"
  | "cleaned"
  | "reaped"
  | "lost";

/** One row of `broker_runs`. */
export interface RunRow {
  container_name: string;
  slug: string;
  job_id: string;
  backend: ExecutorKind;
  engine_id: string;
  runner: string;
  image: string;
  gpus: number;
  gpu_devices: string[];
  status: RunStatus;
  returncode: number | null;
  deadline: Date;
  started_at: Date;
  ended_at: Date | null;
}

/** A GPU lease: one workload's hold on GPUs, live or ended. */
export interface GpuLease {
  container_name: string;
  job_id: string;
  count: number;
  devices: string[];
  status: RunStatus;
  started_at: string;
  ended_at: string | null;
}

/** A workload asking for a slot. */
export interface Admission {
  containerName: string;
  slug: string;
  jobId: string;
  backend: ExecutorKind;
  engineId: string;
  runner: string;
  image: string;
  gpus: number;
  deadline: Date;
}

/** The quota a challenge's workloads share. */
export interface Quota {
  maxConcurrent: number;
  maxGpus: number;
  /** GPU ids leased one workload at a time across every challenge; empty: by count only. */
  gpuDevices: readonly string[];
}

// One lock for the host-wide GPU pool; the per-challenge lock is the challenge's row.
const GPU_POOL_LOCK = 0x706c_6775; // "plgu"

function quotaExceeded(
  resource: string,
  limit: number,
  inUse: number,
  soonest: Date | null,
): HttpError {
  // A retry makes sense about when the soonest workload must have ended (bounded to 1–30 s).
  const wait = soonest ? Math.ceil((soonest.getTime() - Date.now()) / 1000) : 5;
  const retryAfter = Math.min(30, Math.max(1, wait));
  return new HttpError(
    429,
    "quota_exceeded",
    `Workload quota exceeded: ${inUse} of ${limit} ${resource} in use`,
    {
      headers: { "retry-after": String(retryAfter) },
      extra: { resource, limit, in_use: inUse },
    },
  );
}

/**
 * The broker's ledger in Postgres: a row per workload, inserted BEFORE the container exists.
 * Admission locks the challenge's registry row (FOR NO KEY UPDATE), so concurrent requests of
 * one challenge, from any number of master replicas, are admitted one after another against
 * the same count; the lock also orders admission against the challenge being disabled.
 */
export class RunLedger {
  private instance: Promise<string> | undefined;

  constructor(private readonly sql: Sql) {}

  /** This deployment's id (one per database), the `platform.master` label of its workloads. */
  instanceId(): Promise<string> {
    this.instance ??= this.sql<{ id: string }[]>`select id from broker_instance`.then(([row]) => {
      if (!row) throw new Error("broker_instance is empty: the master's migrations did not run");
      return row.id;
    });
    return this.instance;
  }

  /**
   * Reserve a slot (and GPUs) for a workload, or refuse: 403 `challenge_disabled`, 429
   * `quota_exceeded` with the limit, the use and Retry-After. Returns the leased GPU ids.
   */
  async admit(admission: Admission, quota: Quota): Promise<{ gpuDevices: string[] }> {
    return this.sql.begin(async (tx) => {
      const [challenge] = await tx<{ status: string }[]>`
        select status from challenges where slug = ${admission.slug} for no key update`;
      if (!challenge)
        throw new HttpError(
          401,
          "broker_unauthorized",
          "A valid broker token and challenge slug are required",
        );
      if (challenge.status === "disabled") {
        throw new HttpError(
          403,
          "challenge_disabled",
          `Challenge "${admission.slug}" is disabled: its workloads are refused`,
        );
      }
      const [use] = await tx<{ running: number; gpus: number; soonest: Date | null }[]>`
        select count(*)::int as running, coalesce(sum(gpus), 0)::int as gpus, min(deadline) as soonest
        from broker_runs where slug = ${admission.slug} and ended_at is null`;
      if (use!.running >= quota.maxConcurrent)
        throw quotaExceeded("containers", quota.maxConcurrent, use!.running, use!.soonest);
      let devices: string[] = [];
      if (admission.gpus > 0) {
        if (use!.gpus + admission.gpus > quota.maxGpus)
          throw quotaExceeded("gpus", quota.maxGpus, use!.gpus, use!.soonest);
        if (quota.gpuDevices.length) {
          await tx`select pg_advisory_xact_lock(${GPU_POOL_LOCK})`;
          const held = await tx<{ device: string }[]>`
            select unnest(gpu_devices) as device from broker_runs where ended_at is null and gpus > 0`;
          const taken = new Set(held.map((row) => row.device));
          const free = quota.gpuDevices.filter((device) => !taken.has(device));
          if (free.length < admission.gpus)
            throw quotaExceeded("gpu devices", quota.gpuDevices.length, taken.size, null);
          devices = free.slice(0, admission.gpus);
        }
      }
      await tx`
        insert into broker_runs (container_name, slug, job_id, backend, engine_id, runner, image, gpus, gpu_devices, deadline)
        values (${admission.containerName}, ${admission.slug}, ${admission.jobId}, ${admission.backend}, ${admission.engineId},
                ${admission.runner}, ${admission.image}, ${admission.gpus}, ${tx.array(devices)}::text[], ${admission.deadline})`;
      return { gpuDevices: devices };
    });
  }

  /** End a live row; false when it had already ended (the first writer wins). */
  async finish(
    containerName: string,
    status: Exclude<RunStatus, "running">,
    returncode: number | null = null,
  ): Promise<boolean> {
    const rows = await this.sql`
      update broker_runs set status = ${status}, returncode = ${returncode}, ended_at = now()
      where container_name = ${containerName} and ended_at is null
      returning 1`;
    return rows.length > 0;
  }

  /** End several live rows at once; returns the names that were live. */
  async finishMany(
    containerNames: readonly string[],
    status: Exclude<RunStatus, "running">,
  ): Promise<string[]> {
    if (containerNames.length === 0) return [];
    const rows = await this.sql<{ container_name: string }[]>`
      update broker_runs set status = ${status}, ended_at = now()
      where container_name in ${this.sql(containerNames as string[])} and ended_at is null
      returning container_name`;
    return rows.map((row) => row.container_name);
  }

  /** Live rows (holding a slot), optionally of one challenge. */
  async live(slug?: string): Promise<RunRow[]> {
    if (slug)
      return this.sql<
        RunRow[]
      >`select * from broker_runs where ended_at is null and slug = ${slug} order by started_at`;
    return this.sql<RunRow[]>`select * from broker_runs where ended_at is null order by started_at`;
  }

  /** One row by container name. */
  async get(containerName: string): Promise<RunRow | null> {
    const [row] = await this.sql<
      RunRow[]
    >`select * from broker_runs where container_name = ${containerName}`;
    return row ?? null;
  }

  /** The GPU leases of a challenge, newest first (live ones and their history). */
  async gpuLeases(slug: string, limit = 100): Promise<GpuLease[]> {
    const rows = await this.sql<RunRow[]>`
      select * from broker_runs where slug = ${slug} and gpus > 0 order by started_at desc limit ${limit}`;
    return rows.map((row) => ({
      container_name: row.container_name,
      job_id: row.job_id,
      count: row.gpus,
      devices: row.gpu_devices,
      status: row.status,
      started_at: row.started_at.toISOString(),
      ended_at: row.ended_at?.toISOString() ?? null,
    }));
  }

  /** Forget ended rows older than `days` (the lease history a challenge can still read). */
  async prune(days: number): Promise<number> {
    const rows = await this
      .sql`delete from broker_runs where ended_at < now() - make_interval(days => ${days}) returning 1`;
    return rows.length;
  }
}
