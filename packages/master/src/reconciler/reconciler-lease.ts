import type { Sql } from "@platform/core";

/** The lease row as any replica reads it. */
export interface LeaseView {
  holder: string;
  acquired_at: Date;
  renewed_at: Date;
  expires_at: Date;
  /** False once expires_at has passed (by the database's clock). */
  live: boolean;
  last_pass_at: Date | null;
  last_error: string | null;
}

/**
 * A lease in PostgreSQL: one row per name, held by one process until it expires. Taking and
 * renewing are one statement (an upsert that only writes when the row is ours or expired), so
 * of two replicas racing for it exactly one wins; every time is the database's `now()`, so
 * replicas' clocks never disagree about who holds it.
 */
export class ReconcilerLease {
  constructor(
    private readonly sql: Sql,
    /** This process: unique per master process (host, pid, random). */
    readonly holder: string,
    private readonly seconds: number,
    private readonly name = "reconciler",
  ) {}

  /** Take the lease if it is free or expired, or renew it if ours. True while we hold it. */
  async acquire(): Promise<boolean> {
    const rows = await this.sql<{ holder: string }[]>`
      insert into master_leases (name, holder, expires_at)
      values (${this.name}, ${this.holder}, now() + make_interval(secs => ${this.seconds}))
      on conflict (name) do update set
        holder = excluded.holder,
        expires_at = excluded.expires_at,
        renewed_at = now(),
        acquired_at = case when master_leases.holder = excluded.holder
          then master_leases.acquired_at else now() end,
        last_error = case when master_leases.holder = excluded.holder
          then master_leases.last_error else null end
      where master_leases.holder = excluded.holder or master_leases.expires_at <= now()
      returning holder`;
    return rows.length === 1;
  }

  /** Give the lease up (on close), so another replica takes over at its next attempt. */
  async release(): Promise<void> {
    await this.sql`delete from master_leases where name = ${this.name} and holder = ${this.holder}`;
  }

  /** Record the end of a pass: its error (the engine unreachable), or null. Only while ours. */
  async recordPass(error: string | null): Promise<void> {
    await this.sql`
      update master_leases set last_pass_at = now(), last_error = ${error}
      where name = ${this.name} and holder = ${this.holder}`;
  }

  /** The lease as it stands, or null when nobody ever took it (or its holder released it). */
  async read(): Promise<LeaseView | null> {
    const [row] = await this.sql<LeaseView[]>`
      select holder, acquired_at, renewed_at, expires_at, expires_at > now() as live,
             last_pass_at, last_error
      from master_leases where name = ${this.name}`;
    return row ?? null;
  }
}
