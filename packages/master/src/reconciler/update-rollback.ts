import type Docker from "dockerode";
import type { ChallengeRow } from "../registry/challenge-row.js";
import type { StepContext } from "./challenge-step.js";
import { restartDelaySeconds } from "./restart-backoff.js";
import type { UpdateOutcome } from "./rolling-update.js";
import type { RuntimeStateRow } from "./runtime-state-store.js";
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
  // The registry goes back to the image that runs: the desired state says what serves, and
  // the next pass does not try the same bad image again. Another field's change is retried
  // after the backoff.
  if (state?.image && state.image !== row.image)
    await ctx.store.update(row.slug, { image: state.image });
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
      container_id: old.Id,
      last_action: "rollback",
      last_action_at: new Date(),
      last_error: `update to ${row.image} rolled back: ${reason}`,
      failures,
      next_attempt_at: new Date(Date.now() + delay * 1000),
    },
    {
      kind: "runtime_rolled_back",
      detail: {
        image: row.image,
        pinned_image: pinned,
        reason,
        kept: old.Id,
        restored_image: state?.image ?? null,
        holder: ctx.holder,
      },
    },
  );
  return { status: "rolled_back", detail: reason, pinned_image: pinned };
}
