import type { WeightsSnapshot } from "@platform/core";
import { LocalCheckError } from "./subnet-rules.js";

// The validator's health gate: weights are not committed while a challenge that carries emission
// keeps failing its collections. Its share then goes to the burn uid (or to the others, with
// `redistribute`) in every new snapshot, so committing them would move emission away from that
// challenge's miners because of an outage, not because of their work.

/** Collections a challenge may fail in a row before the gate closes (the 4th closes it). */
export const DEFAULT_GRACE_COLLECTIONS = 3;

/** One challenge the gate holds against. */
export interface FailingChallenge {
  slug: string;
  emissionPercent: number;
  /** Consecutive failed collections, newest first, within the snapshots seen. */
  failures: number;
  /** The newest failure's error. */
  error: string | null;
}

/** The gate's answer: open, or closed naming the challenge (the one failing longest first). */
export type HealthVerdict =
  | { ok: true }
  | {
      ok: false;
      /** The challenge that has failed longest. */
      challenge: string;
      failures: number;
      graceCollections: number;
      error: string | null;
      /** Every challenge past the grace, longest failing first. */
      failing: FailingChallenge[];
    };

/** Asked before each submission; a rejection counts as "unknown" (see runValidator). */
export type HealthGate = () => Promise<HealthVerdict>;

/** What the gate reads of a snapshot: its id and its per-challenge `sources`. */
export type GateSnapshot = Pick<WeightsSnapshot, "id" | "sources">;

/** Options of the gate. */
export interface HealthGateOptions {
  /** Failed collections in a row a challenge may have; default 3. More closes the gate. */
  graceCollections?: number;
}

function graceOf(options: HealthGateOptions): number {
  const grace = options.graceCollections ?? DEFAULT_GRACE_COLLECTIONS;
  if (!(Number.isInteger(grace) && grace >= 0)) {
    throw new RangeError("graceCollections must be an integer >= 0");
  }
  return grace;
}

/**
 * Judges the master's collection history: `snapshots` newest first (each snapshot is one
 * collection run, and its `sources` list every active challenge with its emission share and
 * whether its collection `failed`). The active challenges with emission are those of the newest
 * snapshot with `emission_percent > 0`; each one's failures are counted from the newest snapshot
 * back, until a snapshot where it did not fail (or did not appear). The gate closes when a count
 * exceeds `graceCollections`. An `empty` source (a valid reply naming nobody) is not a failure.
 */
export function collectionHealth(
  snapshots: readonly GateSnapshot[],
  options: HealthGateOptions = {},
): HealthVerdict {
  const grace = graceOf(options);
  const [newest] = snapshots;
  if (!newest) return { ok: true };
  const failing: FailingChallenge[] = [];
  for (const source of newest.sources) {
    if (!(source.emission_percent > 0) || source.status !== "failed") continue;
    let failures = 0;
    for (const snapshot of snapshots) {
      const entry = snapshot.sources.find((s) => s.slug === source.slug);
      if (entry?.status !== "failed") break;
      failures += 1;
    }
    if (failures > grace) {
      failing.push({
        slug: source.slug,
        emissionPercent: source.emission_percent,
        failures,
        error: source.error,
      });
    }
  }
  failing.sort((a, b) => b.failures - a.failures || (a.slug < b.slug ? -1 : 1));
  const worst = failing[0];
  if (!worst) return { ok: true };
  return {
    ok: false,
    challenge: worst.slug,
    failures: worst.failures,
    graceCollections: grace,
    error: worst.error,
    failing,
  };
}

/**
 * A gate over the master's stored snapshots: each call reads the newest `grace + 1` of them.
 * In the master: `historyHealthGate({ history: (n) => weights.snapshots.history(n) })`; in the
 * CLI validator, a fetch of the master's snapshot history.
 */
export function historyHealthGate(
  options: HealthGateOptions & {
    /** The newest `limit` snapshots, newest first. */
    history: (limit: number) => Promise<readonly GateSnapshot[]>;
  },
): HealthGate {
  const grace = graceOf(options);
  return async () =>
    collectionHealth(await options.history(grace + 1), { graceCollections: grace });
}

/** A gate fed with the snapshots a validator fetches, and the hook that feeds it. */
export interface ObservingHealthGate {
  gate: HealthGate;
  /** Records a fetched snapshot (a repeat of the newest id is ignored); returns it. */
  observe<T extends GateSnapshot>(snapshot: T): T;
}

/**
 * A gate for a validator that only sees the master's latest snapshot: it keeps the last
 * `grace + 1` distinct snapshots it was shown. A validator fetches less often than the master
 * collects, so the count is a lower bound of the master's real streak; a snapshot history
 * source ({@link historyHealthGate}) is exact.
 */
export function observingHealthGate(options: HealthGateOptions = {}): ObservingHealthGate {
  const grace = graceOf(options);
  const seen: GateSnapshot[] = [];
  return {
    gate: async () => collectionHealth(seen, { graceCollections: grace }),
    observe(snapshot) {
      if (seen[0]?.id !== snapshot.id) {
        seen.unshift({ id: snapshot.id, sources: snapshot.sources });
        seen.splice(grace + 1);
      }
      return snapshot;
    },
  };
}

/** The health gate refused the submission (CLI exit code 3). */
export class HealthGateError extends LocalCheckError {
  override readonly name = "HealthGateError";
  readonly verdict: Extract<HealthVerdict, { ok: false }>;

  constructor(netuid: number, verdict: Extract<HealthVerdict, { ok: false }>) {
    super(
      "HealthGate",
      netuid,
      `challenge ${verdict.challenge} failed its last ${verdict.failures} weights collections ` +
        `(grace ${verdict.graceCollections}${verdict.error ? `; last error: ${verdict.error}` : ""}); ` +
        "not committing until it recovers (override to commit anyway)",
    );
    this.verdict = verdict;
  }
}
