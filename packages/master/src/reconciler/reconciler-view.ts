import { type Static, Type } from "@sinclair/typebox";
import type { ChallengeRow } from "../registry/challenge-row.js";
import { desiredOf, isManaged } from "./desired-state.js";
import type { LeaseView } from "./reconciler-lease.js";
import type { RuntimeStateRow } from "./runtime-state-store.js";

const Time = Type.Union([Type.String({ format: "date-time" }), Type.Null()]);

/** One challenge as the reconciler sees it (admin API, admin page, `platform status`). */
export const ChallengeRuntimeView = Type.Object({
  slug: Type.String(),
  status: Type.String({ description: "The registry status" }),
  desired: Type.Union([
    Type.Literal("running"),
    Type.Literal("stopped"),
    Type.Literal("unmanaged"),
  ]),
  observed: Type.String({
    description:
      "unknown, running (ready), starting, unhealthy, exited, missing, stopped, conflict or failed",
  }),
  image: Type.String({ description: "The registry's image reference" }),
  pinned_image: Type.Union([Type.String(), Type.Null()], {
    description: "What the container runs: a digest, or the engine's image id",
  }),
  container_id: Type.Union([Type.String(), Type.Null()]),
  last_action: Type.Union([Type.String(), Type.Null()]),
  last_action_at: Time,
  last_error: Type.Union([Type.String(), Type.Null()]),
  restarts: Type.Integer(),
  failures: Type.Integer({ description: "Failed (re)starts since last stable: the backoff" }),
  next_attempt_at: Time,
  updated_at: Time,
});
export type ChallengeRuntimeView = Static<typeof ChallengeRuntimeView>;

/** GET /v1/admin/reconciler. */
export const ReconcilerStatus = Type.Object({
  enabled: Type.Boolean(),
  interval_seconds: Type.Number(),
  this_master: Type.String({ description: "This master's lease holder id" }),
  lease: Type.Union([
    Type.Object({
      holder: Type.String(),
      live: Type.Boolean(),
      acquired_at: Time,
      expires_at: Time,
      last_pass_at: Time,
      last_error: Type.Union([Type.String(), Type.Null()]),
    }),
    Type.Null(),
  ]),
  challenges: Type.Array(ChallengeRuntimeView),
});

/** GET /v1/admin/challenges/:slug/runtime. */
export const RuntimeDetail = Type.Object({
  runtime: ChallengeRuntimeView,
  events: Type.Array(
    Type.Object({ kind: Type.String(), detail: Type.Unknown(), created_at: Time }),
  ),
});

const iso = (value: Date | null | undefined) => (value ? new Date(value).toISOString() : null);

/** A challenge's view: its registry row and the reconciler's state (none yet: unknown). */
export function runtimeView(
  row: ChallengeRow,
  state: RuntimeStateRow | null,
): ChallengeRuntimeView {
  return {
    slug: row.slug,
    status: row.status,
    desired: isManaged(row) ? desiredOf(row) : "unmanaged",
    observed: state?.observed ?? "unknown",
    image: row.image,
    pinned_image: state?.image === row.image ? (state?.pinned_image ?? null) : null,
    container_id: state?.container_id ?? null,
    last_action: state?.last_action ?? null,
    last_action_at: iso(state?.last_action_at),
    last_error: state?.last_error ?? null,
    restarts: state?.restarts ?? 0,
    failures: state?.failures ?? 0,
    next_attempt_at: iso(state?.next_attempt_at),
    updated_at: iso(state?.updated_at),
  };
}

/** The whole reconciler's status. */
export function reconcilerStatus(
  lease: LeaseView | null,
  rows: ChallengeRow[],
  states: RuntimeStateRow[],
  self: { holder: string; intervalSeconds: number },
): Static<typeof ReconcilerStatus> {
  const bySlug = new Map(states.map((state) => [state.slug, state]));
  return {
    enabled: true,
    interval_seconds: self.intervalSeconds,
    this_master: self.holder,
    lease: lease && {
      holder: lease.holder,
      live: lease.live,
      acquired_at: iso(lease.acquired_at),
      expires_at: iso(lease.expires_at),
      last_pass_at: iso(lease.last_pass_at),
      last_error: lease.last_error,
    },
    challenges: rows.map((row) => runtimeView(row, bySlug.get(row.slug) ?? null)),
  };
}

/** One challenge's state and its latest runtime events. */
export function runtimeDetail(
  row: ChallengeRow,
  state: RuntimeStateRow | null,
  events: { kind: string; detail: unknown; created_at: Date }[],
): Static<typeof RuntimeDetail> {
  return {
    runtime: runtimeView(row, state),
    events: events.map((event) => ({ ...event, created_at: iso(event.created_at) })),
  };
}
