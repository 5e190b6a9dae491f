import type { Sql } from "@platform/core";

/** What a challenge should be doing: its registry status says. */
export type DesiredRuntime = "running" | "stopped";

/**
 * What the engine showed at the last pass: `running` (ready), `starting` (within its start
 * grace), `unhealthy`, `exited`, `missing`, `stopped` (not running, as desired), `conflict` (a
 * container of its name belongs to someone else), `failed` (could not be started).
 */
export type ObservedRuntime =
  | "unknown"
  | "running"
  | "starting"
  | "unhealthy"
  | "exited"
  | "missing"
  | "stopped"
  | "conflict"
  | "failed";

/** What the reconciler did last. */
export type RuntimeAction = "start" | "restart" | "replace" | "stop" | "update" | "rollback";

/** One row of `challenge_runtime`. */
export interface RuntimeStateRow {
  slug: string;
  desired: DesiredRuntime;
  observed: ObservedRuntime;
  image: string | null;
  pinned_image: string | null;
  container_id: string | null;
  last_action: RuntimeAction | null;
  last_action_at: Date | null;
  last_error: string | null;
  restarts: number;
  failures: number;
  next_attempt_at: Date | null;
  updated_at: Date;
}

/** The fields a pass writes; the others keep their value. */
export type RuntimeStatePatch = Partial<
  Omit<RuntimeStateRow, "slug" | "desired" | "updated_at" | "restarts">
> & {
  /** Add one to `restarts`. */
  restarted?: boolean;
};

/** A runtime event: kind `runtime_<what>`, in `challenge_events` beside the registry's. */
export interface RuntimeEvent {
  kind:
    | "runtime_started"
    | "runtime_restarted"
    | "runtime_replaced"
    | "runtime_stopped"
    | "runtime_failed"
    | "runtime_updated"
    | "runtime_rolled_back";
  detail: Record<string, unknown>;
}

/**
 * The reconciler's memory in PostgreSQL: `challenge_runtime` (one row per challenge it has
 * seen) and its events in `challenge_events`. A state write and its event are one transaction.
 */
export class RuntimeStateStore {
  constructor(private readonly sql: Sql) {}

  /** Every challenge's state, by slug. */
  async list(): Promise<RuntimeStateRow[]> {
    return this.sql<RuntimeStateRow[]>`select * from challenge_runtime order by slug`;
  }

  /** One challenge's state, or null before the reconciler first saw it. */
  async find(slug: string): Promise<RuntimeStateRow | null> {
    const [row] = await this.sql<RuntimeStateRow[]>`
      select * from challenge_runtime where slug = ${slug}`;
    return row ?? null;
  }

  /** Write what a pass saw (and did), with its event if any; returns the new row. */
  async write(
    slug: string,
    desired: DesiredRuntime,
    patch: RuntimeStatePatch,
    event?: RuntimeEvent,
  ): Promise<RuntimeStateRow | null> {
    const { restarted, ...fields } = patch;
    const values = Object.fromEntries(
      Object.entries(fields).filter(([, value]) => value !== undefined),
    ) as Record<string, never>;
    return this.sql.begin(async (tx) => {
      // The challenge may have been removed from the registry meanwhile: then nothing is written.
      const [exists] = await tx`select 1 from challenges where slug = ${slug} for share`;
      if (!exists) return null;
      const [row] = await tx<RuntimeStateRow[]>`
        insert into challenge_runtime ${tx({ slug, desired, ...values, restarts: restarted ? 1 : 0 })}
        on conflict (slug) do update set ${tx({ desired, ...values, updated_at: new Date() } as unknown as Record<string, never>)},
          restarts = challenge_runtime.restarts + ${restarted ? 1 : 0}
        returning *`;
      if (event) {
        await tx`insert into challenge_events (slug, kind, detail)
          values (${slug}, ${event.kind}, ${tx.json(event.detail as never)})`;
      }
      return row ?? null;
    });
  }

  /** A challenge's runtime events, newest first. */
  async events(
    slug: string,
    limit = 20,
  ): Promise<{ kind: string; detail: unknown; created_at: Date }[]> {
    return this.sql`
      select kind, detail, created_at from challenge_events
      where slug = ${slug} and kind like 'runtime\\_%' order by id desc limit ${limit}`;
  }
}
