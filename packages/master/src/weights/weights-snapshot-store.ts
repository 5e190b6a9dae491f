import type { Sql, WeightsSnapshot, WeightsSource } from "@platform/core";
import type { AggregatedWeights, FailurePolicy } from "./aggregate-weights.js";

/** How polling one challenge went, kept beside a snapshot for the dashboard and operators. */
export interface ChallengeCollection {
  slug: string;
  /** ok: a valid reply (it may still name nobody); failed: no usable reply. */
  status: "ok" | "failed";
  /** Duration of the last attempt (ms); null when the challenge was not called. */
  latency_ms: number | null;
  attempts: number;
  error: string | null;
  dropped_invalid: number;
  dropped_unknown: number;
}

/** The metagraph's state during a run: fresh, the last good copy, unusable, or not configured. */
export interface MetagraphState {
  status: "ok" | "stale" | "failed" | "none";
  /** Hotkeys in the map used (0 when none). */
  hotkeys: number;
  error: string | null;
}

/** Operator detail of the collection run that produced a snapshot. */
export interface CollectionReport {
  started_at: string;
  duration_ms: number;
  metagraph: MetagraphState;
  challenges: ChallengeCollection[];
}

/** A snapshot as stored: the public record plus the policy it was computed under and the run's detail. */
export interface StoredWeightsSnapshot extends WeightsSnapshot {
  failure_policy: FailurePolicy;
  collection: CollectionReport;
}

interface SnapshotRow {
  id: string | number;
  computed_at: Date;
  uids: number[];
  weights: number[];
  weights_u16: number[];
  hotkeys: Record<string, number>;
  burned: boolean;
  sources: WeightsSource[];
  failure_policy: FailurePolicy;
  collection: CollectionReport;
}

function fromRow(row: SnapshotRow): StoredWeightsSnapshot {
  return {
    // bigserial arrives as a string from postgres.js; ids stay far below 2^53.
    id: Number(row.id),
    computed_at: row.computed_at.toISOString(),
    uids: row.uids,
    weights: row.weights,
    weights_u16: row.weights_u16,
    hotkeys: row.hotkeys,
    burned: row.burned,
    sources: row.sources,
    failure_policy: row.failure_policy,
    collection: row.collection,
  };
}

/** The public `WeightsSnapshot` of a stored one: exactly the schema's fields, nothing operator-only. */
export function publicSnapshot(snapshot: StoredWeightsSnapshot): WeightsSnapshot {
  const { id, computed_at, uids, weights, weights_u16, hotkeys, burned, sources } = snapshot;
  return { id, computed_at, uids, weights, weights_u16, hotkeys, burned, sources };
}

/** Weights snapshots in Postgres: append, prune by count, read the latest or the history. */
export class WeightsSnapshotStore {
  constructor(
    private readonly sql: Sql,
    private readonly options: { keep: number },
  ) {}

  /** Insert a snapshot and prune past `keep`, in one transaction; returns it as stored. */
  async save(
    aggregate: AggregatedWeights,
    meta: { failure_policy: FailurePolicy; collection: CollectionReport },
  ): Promise<StoredWeightsSnapshot> {
    const json = (value: unknown) => this.sql.json(value as never);
    return this.sql.begin(async (tx) => {
      const [row] = await tx<SnapshotRow[]>`
        insert into weight_snapshots (uids, weights, weights_u16, hotkeys, burned, sources, failure_policy, collection)
        values (
          ${json(aggregate.uids)}, ${json(aggregate.weights)}, ${json(aggregate.weights_u16)}, ${json(aggregate.hotkeys)},
          ${aggregate.burned}, ${json(aggregate.sources)}, ${meta.failure_policy}, ${json(meta.collection)}
        )
        returning *`;
      await tx`
        delete from weight_snapshots
        where id <= (select id from weight_snapshots order by id desc offset ${this.options.keep} limit 1)`;
      return fromRow(row!);
    });
  }

  /** The newest snapshot, or null before the first. */
  async latest(): Promise<StoredWeightsSnapshot | null> {
    const [row] = await this.sql<
      SnapshotRow[]
    >`select * from weight_snapshots order by id desc limit 1`;
    return row ? fromRow(row) : null;
  }

  /** The newest `limit` snapshots, newest first. */
  async history(limit: number): Promise<StoredWeightsSnapshot[]> {
    const rows = await this.sql<
      SnapshotRow[]
    >`select * from weight_snapshots order by id desc limit ${limit}`;
    return rows.map(fromRow);
  }

  /** Unix time (seconds) the newest snapshot was computed, or null before the first. */
  async latestTimestampSeconds(): Promise<number | null> {
    const [row] = await this.sql<{ at: number }[]>`
      select extract(epoch from computed_at)::float8 as at from weight_snapshots order by id desc limit 1`;
    return row ? row.at : null;
  }

  /** Seconds since the newest snapshot by the database's clock (replicas may disagree on theirs), or null. */
  async latestAgeSeconds(): Promise<number | null> {
    const [row] = await this.sql<{ age: number }[]>`
      select extract(epoch from (now() - computed_at))::float8 as age from weight_snapshots order by id desc limit 1`;
    return row ? row.age : null;
  }
}
