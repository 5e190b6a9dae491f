import type Docker from "dockerode";
import type { ChallengeRow } from "../registry/challenge-row.js";
import type { StepContext } from "./challenge-step.js";
import { restartDelaySeconds } from "./restart-backoff.js";
import type { UpdateOutcome } from "./rolling-update.js";
import type { RuntimeStatePatch, RuntimeStateRow } from "./runtime-state-store.js";
import { nextName } from "./update-names.js";

/** The new container is removed; the old one, never touched, keeps serving. */
export async function rollBack(
  ctx: StepContext,
  row: ChallengeRow,
  state: RuntimeStateRow | null,
  old: Docker.ContainerInspectInfo,
  pinned: string | null,
  reason: string,
): Promise<UpdateOutcome> {
  const next = await ctx.engine.inspectName(nextName(row.slug));
  if (next) await ctx.engine.remove(next.Id, 0);
  await recordRollback(ctx, row, state, {
    reason,
    restoredImage: state?.image ?? null,
    patch: { container_id: old.Id },
    detail: { pinned_image: pinned, kept: old.Id },
  });
  return { status: "rolled_back", detail: reason, pinned_image: pinned };
}

/**
 * Records an update rolled back, on either backend: the registry goes back to the image that
 * runs (the desired state says what serves, and the next pass does not try the same bad image
 * again; another field's change is retried after the backoff), the failure is counted with its
 * backoff, and a `runtime_rolled_back` event says why and what was kept.
 */
export async function recordRollback(
  ctx: StepContext,
  row: ChallengeRow,
  state: RuntimeStateRow | null,
  rollback: {
    reason: string;
    /** The image that runs again (null: unknown, the registry is left as it is). */
    restoredImage: string | null;
    patch: RuntimeStatePatch;
    detail: Record<string, unknown>;
    at?: Date;
  },
): Promise<void> {
  const { reason, restoredImage } = rollback;
  if (restoredImage && restoredImage !== row.image)
    await ctx.store.update(row.slug, { image: restoredImage });
  const failures = (state?.failures ?? 0) + 1;
  const delay = restartDelaySeconds(
    failures,
    ctx.config.backoffSeconds,
    ctx.config.backoffMaxSeconds,
  );
  ctx.onAction(row.slug, "update", "failed");
  await ctx.state.write(
    row.slug,
    "running",
    {
      ...rollback.patch,
      last_action: "rollback",
      last_action_at: rollback.at ?? new Date(),
      last_error: `update to ${row.image} rolled back: ${reason}`,
      failures,
      next_attempt_at: new Date(Date.now() + delay * 1000),
    },
    {
      kind: "runtime_rolled_back",
      detail: {
        image: row.image,
        reason,
        ...rollback.detail,
        restored_image: restoredImage,
        holder: ctx.holder,
      },
    },
  );
}
