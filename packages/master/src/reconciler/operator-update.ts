import { PLATFORM_LABELS } from "@platform/challenge-sdk/sandbox";
import { HttpError, type RuntimeOperationResponse } from "@platform/core";
import type { StepContext } from "./challenge-step.js";
import { containerSpec, desiredOf, isManaged, specHash } from "./desired-state.js";
import { SPEC_LABEL } from "./engine-view.js";
import { type ProgressSink, updateBeside } from "./rolling-update.js";
import { swarmUpdate } from "./swarm-operations.js";

const answer = (slug: string, status: string, detail: string): RuntimeOperationResponse => ({
  slug,
  operation: "update",
  status,
  detail,
});

/**
 * `POST /v1/admin/challenges/:slug/update`: set the challenge's image and, when its container
 * serves, update it beside itself now, reporting each step. `updated` or `rolled_back` (the
 * registry then names the image that still runs); `unchanged` when it already runs that spec;
 * `pending` when nothing serves yet or another master holds the lease (its pass applies it).
 */
export async function operatorUpdate(
  ctx: StepContext,
  leader: boolean,
  slug: string,
  image: string,
  progress: ProgressSink,
): Promise<RuntimeOperationResponse> {
  const before = await ctx.store.get(slug);
  if (desiredOf(before) !== "running" || !isManaged(before))
    throw new HttpError(
      409,
      "challenge_not_active",
      `Challenge "${slug}" is not an active challenge this master runs: set its image with PATCH`,
    );
  const row = before.image === image ? before : await ctx.store.update(slug, { image });
  if (!leader)
    return answer(
      slug,
      "pending",
      "Another master holds the reconciler lease: it updates the container",
    );
  if (ctx.swarm) return swarmUpdate(ctx, row, progress);
  const state = await ctx.state.find(slug);
  const info = await ctx.engine.inspect(slug);
  if (!info?.State.Running || info.Config.Labels?.[PLATFORM_LABELS.master] !== ctx.instanceId)
    return answer(
      slug,
      "pending",
      "No container of this master serves it: the reconciler starts the new image",
    );
  const pinned = state?.image === row.image ? state.pinned_image : null;
  const spec = pinned ? specHash(containerSpec(row, pinned), ctx.masterKey) : null;
  if (spec && info.Config.Labels?.[SPEC_LABEL] === spec)
    return answer(slug, "unchanged", `${slug} already runs ${pinned}`);
  const outcome = await updateBeside(ctx, row, state, info, "operator update", progress);
  return answer(slug, outcome.status, outcome.detail);
}
